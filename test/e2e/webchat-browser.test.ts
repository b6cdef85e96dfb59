import { join } from "node:path";
import type { Browser } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { launchBrowser } from "./browser.js";
import { cleanupAll, E2eState, type GatewayProcess } from "./harness.js";

const REPLY = "Streaming works: one, two, three, four, five, six, seven, eight, nine, ten.";

/**
 * The web chat page served by the real gateway, in a real (headless) Chromium: send a message, watch the reply
 * stream in while the busy indicator shows, reload and find the conversation again, read from the transcript.
 */
describe("e2e: the web chat page in Chromium", () => {
  let state: E2eState;
  let gw: GatewayProcess;
  let browser: Browser;

  beforeAll(async () => {
    state = await E2eState.create();
    gw = await state.startGateway();
    browser = await launchBrowser();
  });
  afterAll(async () => {
    await browser?.close();
    await cleanupAll();
  });

  it("streams the reply, shows the busy indicator, and hydrates the history after a reload", async () => {
    const page = await browser.newPage({ viewport: { width: 900, height: 640 } });
    const problems: string[] = [];
    page.on("pageerror", (error) => problems.push(`page error: ${error.message}`));
    page.on("console", (message) => {
      if (message.type() === "error") problems.push(`console: ${message.text()}`);
    });
    await page.goto(gw.url);
    await page.waitForSelector('body[data-state="ready"]');
    await expect(page.locator("#session").textContent()).resolves.toContain("main");

    // Record every text the reply bubble shows, to see it grow chunk by chunk.
    await page.evaluate(() => {
      const seen: string[] = [];
      (window as unknown as { seenTexts: string[] }).seenTexts = seen;
      const messages = document.getElementById("messages");
      if (!messages) throw new Error("no #messages");
      new MutationObserver(() => {
        const bubble = messages.querySelector('[data-role="assistant"] .text');
        const text = bubble?.textContent ?? "";
        if (text && seen.at(-1) !== text) seen.push(text);
      }).observe(messages, { subtree: true, childList: true, characterData: true });
    });

    state.fake.enqueue({ text: REPLY, chunks: 5, hang: "before-headers" });
    await page.fill("#input", "Hello from Chromium");
    await page.click("#send");
    await state.fake.waitForRequest(1);
    // The turn runs (the model has not answered yet): the busy indicator says so.
    await page.waitForSelector('#busy[data-turn="true"]', { state: "visible" });
    await expect(page.locator('[data-role="user"] .text').allTextContents()).resolves.toEqual([
      "Hello from Chromium",
    ]);

    state.fake.release();
    const final = page.locator('[data-role="assistant"][data-final="true"] .text');
    await final.waitFor();
    await expect(final.allTextContents()).resolves.toEqual([REPLY]);
    await page.waitForSelector("#busy", { state: "hidden" });
    const seen = await page.evaluate(() => (window as unknown as { seenTexts: string[] }).seenTexts);
    const partial = seen.filter((text) => text !== REPLY);
    expect(partial.length, `texts shown: ${JSON.stringify(seen)}`).toBeGreaterThanOrEqual(3);
    for (const text of partial) expect(REPLY.startsWith(text)).toBe(true);
    expect(seen.at(-1)).toBe(REPLY);

    await page.reload();
    await page.waitForSelector('body[data-state="ready"]');
    await expect(page.locator('[data-role="user"] .text').allTextContents()).resolves.toEqual([
      "Hello from Chromium",
    ]);
    await expect(page.locator('[data-role="assistant"] .text').allTextContents()).resolves.toEqual([REPLY]);
    await expect(page.locator("#busy").isHidden()).resolves.toBe(true);
    await page.screenshot({ path: join(state.dir, "webchat.png") });
    expect(problems).toEqual([]);
  });
});
