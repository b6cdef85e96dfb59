import { readFile } from "node:fs/promises";
import { join } from "node:path";
import type { Browser } from "playwright-core";
import { afterAll, describe, expect, it } from "vitest";
import { markerReply } from "../fakes/openai-server.js";
import { launchBrowser } from "./browser.js";
import { openChat, send } from "./browser-page.js";
import { cleanupAll, E2eState } from "./harness.js";

/**
 * An approval in the web chat, through the real gateway in a real headless Chromium: the prompt shows its
 * buttons; Approve runs the command once and the buttons go.
 */
describe("e2e: approvals in the web chat", () => {
  let browser: Browser | undefined;
  afterAll(async () => {
    await browser?.close();
    await cleanupAll();
  });

  it("the prompt's Approve button runs the command once; the buttons are gone after", async () => {
    const state = await E2eState.create({
      config: { inbound: { reply: { agent: { approvals: "risky" } } } },
    });
    state.fake.setDefault(markerReply);
    const [gw, launched] = await Promise.all([state.startGateway(), launchBrowser()]);
    browser = launched;
    const { page, problems } = await openChat(browser, gw.url);
    await send(page, "[[bash:echo ran >> runs.txt]]");
    const buttons = page.locator('[data-role="approval-buttons"] button');
    await buttons.first().waitFor();
    expect(await buttons.allTextContents()).toEqual(["Approve", "Approve always", "Deny"]);
    const prompt = (await page.locator('[data-role="notice"]').last().textContent()) ?? "";
    expect(prompt).toContain("bash wants to run");
    expect(prompt).toContain("echo ran >> runs.txt");

    await buttons.first().click();
    await page
      .locator('[data-role="assistant"]', { hasText: "echo: [[bash:echo ran >> runs.txt]]" })
      .waitFor();
    await page.locator('[data-role="approval-buttons"]').waitFor({ state: "detached" });
    expect(await readFile(join(state.dir, "workspace", "runs.txt"), "utf8")).toBe("ran\n");
    expect(problems).toEqual([]);
    await gw.stop();
  });
});
