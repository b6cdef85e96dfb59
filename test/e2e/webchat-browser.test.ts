import { rename } from "node:fs/promises";
import { join } from "node:path";
import JSON5 from "json5";
import type { Browser, Page } from "playwright-core";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { launchBrowser } from "./browser.js";
import {
  type ChatPage,
  contrastRatio,
  openChat,
  recorded,
  recordReplyBubbles,
  send,
} from "./browser-page.js";
import { cleanupAll, E2eState, type GatewayProcess } from "./harness.js";

const REPLY = "Streaming works: one, two, three, four, five, six, seven, eight, nine, ten.";
/** The context window of the shared gateway (`inbound.reply.agent.contextTokens`), small to read the gauge. */
const WINDOW = 10_000;

/**
 * The web chat page served by the real gateway, in a real headless Chromium (test/e2e/browser.ts picks it):
 * what a person sees while a reply streams, in every tab; Markdown; the empty page; scrolling; replies cut short;
 * contrast; the context gauge.
 */
describe("e2e: the web chat page in Chromium", () => {
  let state: E2eState;
  let gw: GatewayProcess;
  let browser: Browser;
  let opened: ChatPage[] = [];

  beforeAll(async () => {
    state = await E2eState.create({ config: { inbound: { reply: { agent: { contextTokens: WINDOW } } } } });
    // Both at once; whichever started is kept for afterAll even when the other failed.
    const [started, launched] = await Promise.allSettled([state.startGateway(), launchBrowser()]);
    if (launched.status === "fulfilled") browser = launched.value;
    if (started.status === "rejected") throw started.reason;
    if (launched.status === "rejected") throw launched.reason;
    gw = started.value;
  });
  afterEach(async () => {
    await Promise.all(opened.map((p) => p.page.close()));
    opened = [];
  });
  afterAll(async () => {
    await browser?.close();
    await cleanupAll();
  });

  /** Each test starts on a fresh session (`/new`), so it sees only its own conversation. */
  async function freshChat(): Promise<ChatPage> {
    expect((await gw.agent("/new")).status).toBe(200);
    return open();
  }
  async function open(url = gw.url): Promise<ChatPage> {
    const chat = await openChat(browser, url);
    opened.push(chat);
    return chat;
  }
  const problemsOf = () => opened.flatMap((p) => p.problems);
  const texts = (page: Page, selector: string) => page.locator(selector).allTextContents();

  it("shows each reply in exactly one bubble while it streams and after, in every tab watching", async () => {
    const a = await freshChat();
    const b = await open();
    // The empty page names the session and the model.
    await expect(a.page.locator("#welcome").textContent()).resolves.toContain(
      `Session main · model fake-model at ${state.fake.url}`,
    );
    await expect(a.page.locator("#setup-hint").count()).resolves.toBe(0);
    await expect(a.page.locator("#model").textContent()).resolves.toBe("model fake-model");
    for (const chat of [a, b]) await recordReplyBubbles(chat.page, REPLY);

    const before = state.fake.requests.length;
    state.fake.enqueue({ text: REPLY, chunks: 5, hang: "before-headers" });
    await send(a.page, "Hello from Chromium");
    await state.fake.waitForRequest(before + 1);
    // The turn runs (the model has not answered yet): both tabs say so.
    for (const chat of [a, b])
      await chat.page.waitForSelector('#busy[data-turn="true"]', { state: "visible" });
    await expect(texts(b.page, '[data-role="user"] .text')).resolves.toEqual(["Hello from Chromium"]);
    await expect(a.page.locator("#welcome").isHidden()).resolves.toBe(true);

    state.fake.release();
    await a.page.waitForSelector('[data-role="user"][data-status="answered"]');
    // A later message from another web chat (the harness's own chatId): once both tabs show its reply, every
    // event of the first turn has been handled there.
    await gw.agent("sync");
    for (const chat of [a, b]) {
      await chat.page.waitForSelector('[data-role="assistant"][data-final="true"] >> text="echo: sync"');
      await chat.page.waitForSelector("#busy", { state: "hidden" });
      const { counts, texts: shown } = await recorded(chat.page);
      const fromFirst = counts.slice(counts.findIndex((n) => n > 0));
      expect(fromFirst.length, "the reply was never shown").toBeGreaterThan(0);
      expect(new Set(fromFirst), `bubbles of the reply, at each change: ${fromFirst.join(",")}`).toEqual(
        new Set([1]),
      );
      // It grew chunk by chunk, in place.
      expect(shown.length, `texts shown: ${JSON.stringify(shown)}`).toBeGreaterThanOrEqual(4);
      for (const text of shown) expect(REPLY.startsWith(text)).toBe(true);
      expect(shown.at(-1)).toBe(REPLY);
      await expect(texts(chat.page, '[data-role="assistant"] .text')).resolves.toEqual([REPLY, "echo: sync"]);
      await expect(texts(chat.page, '[data-role="user"] .label')).resolves.toEqual(["You", "You"]);
    }

    // After a reload the history holds the same, and the person's own messages are still theirs.
    await a.page.reload();
    await a.page.waitForSelector('body[data-state="ready"]');
    await expect(texts(a.page, '[data-role="user"] .text')).resolves.toEqual(["Hello from Chromium", "sync"]);
    await expect(texts(a.page, '[data-role="user"] .label')).resolves.toEqual(["You", "You"]);
    await expect(texts(a.page, '[data-role="assistant"] .text')).resolves.toEqual([REPLY, "echo: sync"]);
    await expect(texts(a.page, '[data-role="assistant"] .label')).resolves.toEqual([
      "Assistant",
      "Assistant",
    ]);
    await expect(a.page.locator("#busy").isHidden()).resolves.toBe(true);
    await a.page.screenshot({ path: join(state.dir, "webchat.png") });
    expect(problemsOf()).toEqual([]);
  });

  it("renders Markdown replies with raw HTML shown as text and only safe links", async () => {
    const { page } = await freshChat();
    const markdown = [
      "Here is **bold** and `code`.",
      "",
      '<img src=x onerror="window.__pwned = 1"> and <b>not bold</b>',
      "",
      "- first",
      "- second",
      "",
      "| Name | Size |",
      "| ---- | ---- |",
      "| a.txt | 3 |",
      "",
      "```js",
      "const x = 1 < 2;",
      "```",
      "",
      "[docs](https://example.com/docs) [bad](javascript:window.__pwned=2) [data](data:image/png;base64,AAAA)",
    ].join("\n");
    state.fake.enqueue({ text: markdown, chunks: 6 });
    await send(page, "show me markdown");
    const bubble = page.locator('[data-role="assistant"][data-final="true"]');
    await bubble.waitFor();
    const seen = await bubble.evaluate((el) => ({
      strong: Array.from(el.querySelectorAll(".text strong")).map((e) => e.textContent),
      items: Array.from(el.querySelectorAll(".text ul > li")).map((e) => e.textContent),
      headers: Array.from(el.querySelectorAll(".text table th")).map((e) => e.textContent),
      cells: Array.from(el.querySelectorAll(".text table td")).map((e) => e.textContent),
      code: el.querySelector(".text pre > code")?.textContent,
      imgs: el.querySelectorAll("img").length,
      bolds: el.querySelectorAll("b").length,
      links: Array.from(el.querySelectorAll("a")).map((a) => ({
        href: a.getAttribute("href"),
        rel: a.getAttribute("rel"),
        target: a.getAttribute("target"),
      })),
      text: el.querySelector(".text")?.textContent ?? "",
      pwned: (window as unknown as { __pwned?: number }).__pwned,
    }));
    expect(seen.strong).toEqual(["bold"]);
    expect(seen.items).toEqual(["first", "second"]);
    expect(seen.headers).toEqual(["Name", "Size"]);
    expect(seen.cells).toEqual(["a.txt", "3"]);
    expect(seen.code).toBe("const x = 1 < 2;\n");
    // Raw HTML is text: no element made of it, nothing ran.
    expect(seen.imgs).toBe(0);
    expect(seen.bolds).toBe(0);
    expect(seen.text).toContain('<img src=x onerror="window.__pwned = 1"> and <b>not bold</b>');
    expect(seen.pwned).toBeUndefined();
    // Only the https link is a link, and it cannot reach back into this page.
    expect(seen.links).toEqual([
      { href: "https://example.com/docs", rel: "noopener noreferrer", target: "_blank" },
    ]);
    expect(seen.text).toContain("[bad](javascript:window.__pwned=2)");
    // The person's own message stays plain text.
    await expect(texts(page, '[data-role="user"] .text')).resolves.toEqual(["show me markdown"]);
    expect(problemsOf()).toEqual([]);
  });

  it("scrolls to the person's new message even when they had scrolled up", async () => {
    expect((await gw.agent("/new")).status).toBe(200);
    const long = Array.from({ length: 12 }, (_, i) => `line ${i + 1}`).join("\n");
    for (let i = 0; i < 4; i++) expect((await gw.agent(`${long}\nmessage ${i}`)).status).toBe(200);
    const { page } = await open();
    const inView = (selector: string) =>
      page.locator(selector).evaluate((el) => {
        const box = el.getBoundingClientRect();
        const view = (document.getElementById("messages") as HTMLElement).getBoundingClientRect();
        return box.top >= view.top && box.bottom <= view.bottom + 1;
      });
    await page.locator("#messages").evaluate((el) => {
      if (el.scrollHeight <= el.clientHeight * 2) throw new Error("the history is too short to scroll");
      el.scrollTop = 0;
    });
    await expect(inView('[data-role="assistant"]:last-child')).resolves.toBe(false);
    await send(page, "where did my message go?");
    await expect(inView('[data-role="user"][data-status]')).resolves.toBe(true);
    // The reply follows it into view.
    await page.waitForSelector(
      '[data-role="assistant"][data-final="true"] >> text="echo: where did my message go?"',
    );
    await expect(inView('[data-role="assistant"]:last-child')).resolves.toBe(true);
    expect(problemsOf()).toEqual([]);
  });

  it("marks a reply cut short by /stop, in the one bubble it streamed in", async () => {
    const { page } = await freshChat();
    const before = state.fake.requests.length;
    state.fake.hold(); // the first test released every hang
    state.fake.enqueue({
      text: "The beginning of a long answer that never ends",
      chunks: 8,
      hang: "after-first-output",
    });
    await send(page, "tell me everything");
    await state.fake.waitForRequest(before + 1);
    await page.waitForSelector('[data-role="assistant"][data-streaming="true"] .text >> text=/The/');
    await send(page, "/stop");
    const cut = page.locator('[data-role="assistant"][data-stop-reason="aborted"]');
    await cut.waitFor();
    await expect(cut.locator(".cut").textContent()).resolves.toBe("Stopped: this reply is incomplete.");
    await expect(cut.getAttribute("data-streaming")).resolves.toBe("false");
    await expect(page.locator('[data-role="assistant"]').count()).resolves.toBe(1);
    await page.waitForSelector("#busy", { state: "hidden" });
    expect(problemsOf()).toEqual([]);
  });

  it("keeps the Send button's text at WCAG AA contrast, light and dark", async () => {
    const { page } = await freshChat();
    for (const colorScheme of ["light", "dark"] as const) {
      await page.emulateMedia({ colorScheme });
      const { fg, bg, bodyBg } = await page.locator("#send").evaluate((el) => {
        const style = getComputedStyle(el);
        return {
          fg: style.color,
          bg: style.backgroundColor,
          bodyBg: getComputedStyle(document.body).backgroundColor,
        };
      });
      expect(contrastRatio(fg, bg), `${colorScheme}: ${fg} on ${bg}`).toBeGreaterThanOrEqual(4.5);
      // The scheme really switched (the page follows prefers-color-scheme).
      expect(bodyBg).toBe(colorScheme === "dark" ? "rgb(22, 22, 24)" : "rgb(250, 250, 250)");
    }
  });

  it("shows the context used against the window in the header, and says when it is estimated", async () => {
    const { page } = await freshChat();
    const gauge = page.locator("#context");
    await page.waitForSelector('#context[data-used="0"]');
    await expect(gauge.locator("#context-text").textContent()).resolves.toBe("0/10k tokens (0.0%)");

    state.fake.enqueue({
      text: "counted",
      usage: { prompt_tokens: 2500, completion_tokens: 5, total_tokens: 2505 },
    });
    await send(page, "count my tokens");
    await page.waitForSelector('#context[data-used="2500"]');
    await expect(gauge.getAttribute("data-window")).resolves.toBe(String(WINDOW));
    await expect(gauge.getAttribute("data-estimated")).resolves.toBe("false");
    await expect(gauge.locator("#context-text").textContent()).resolves.toBe("2.5k/10k tokens (25.0%)");
    await expect(gauge.getAttribute("title")).resolves.toBe("Context: 2.5k/10k tokens (25.0%)");
    await expect(
      gauge.locator("meter").evaluate((m) => [(m as HTMLMeterElement).value, (m as HTMLMeterElement).max]),
    ).resolves.toEqual([2500, WINDOW]);

    state.fake.enqueue({ text: "not counted", usage: null });
    await send(page, "and now without usage");
    await page.waitForSelector('#context[data-estimated="true"]');
    await expect(gauge.locator("#context-text").textContent()).resolves.toMatch(
      /^\d+(\.\d)?k?\/10k tokens \(\d+\.\d%\) \(estimated\)$/,
    );
    // The same words as /status.
    const status = await gw.agent("/status");
    const words = await gauge.locator("#context-text").textContent();
    expect(status.body.payloads.map((p) => p.text).join("\n")).toContain(`Context: ${words}`);
    expect(problemsOf()).toEqual([]);
  });

  it("marks a reply cut short by a watchdog", async () => {
    const watched = await E2eState.create({
      config: { inbound: { reply: { session: { timeouts: { noProgressSeconds: 1 } } } } },
    });
    const wgw = await watched.startGateway();
    const { page } = await open(wgw.url);
    watched.fake.enqueue({
      text: "Half of an answer and then silence",
      chunks: 6,
      hang: "after-first-output",
    });
    await send(page, "answer slowly");
    const cut = page.locator('[data-role="assistant"][data-stop-reason="timeout"]');
    await cut.waitFor();
    await expect(cut.locator(".cut").textContent()).resolves.toContain("Cut short by a watchdog");
    await expect(page.locator('[data-role="assistant"]').count()).resolves.toBe(1);
    expect(problemsOf()).toEqual([]);
  });

  it("shows the session's title in the header once the first exchange names it, as text", async () => {
    const titled = await E2eState.create({ config: { inbound: { reply: { session: { titles: true } } } } });
    titled.fake.titleText = "Trip to <b>Lisbon</b>";
    const tgw = await titled.startGateway();
    const { page } = await open(tgw.url);
    await expect(page.locator("#session").textContent()).resolves.toBe("session main");
    await send(page, "help me plan a trip to Lisbon");
    await page.waitForSelector('[data-role="assistant"][data-final="true"]');
    // The title is written after the reply went out; the page reads it again until it is there.
    await page.locator('#session[data-title="Trip to <b>Lisbon</b>"]').waitFor({ timeout: 15_000 });
    await expect(page.locator("#session").textContent()).resolves.toBe(
      "session main — Trip to <b>Lisbon</b>",
    );
    await expect(page.locator("#session b").count()).resolves.toBe(0);
    await expect(page.title()).resolves.toBe("Trip to <b>Lisbon</b> · clawdis");
    expect(titled.fake.titleRequests).toHaveLength(1);
    // A page opened later shows it from the start.
    const later = await open(tgw.url);
    await later.page.locator('#session[data-title="Trip to <b>Lisbon</b>"]').waitFor({ timeout: 15_000 });
    expect(problemsOf()).toEqual([]);
  });

  it("says on the empty page that no model is configured, which file to edit and how", async () => {
    const bare = await E2eState.create({ config: { inbound: { reply: { agent: { model: undefined } } } } });
    // An endpoint that lists one model would be used without a name; one that lists two leaves it unset.
    bare.fake.models.splice(0, bare.fake.models.length, "model-a", "model-b");
    const bgw = await bare.startGateway();
    const { page } = await open(bgw.url);
    await expect(page.locator("#model").textContent()).resolves.toBe("no model configured");
    await expect(page.locator("#welcome .welcome-session").textContent()).resolves.toBe(
      "Session main · no model configured",
    );
    await expect(page.locator("#setup-path").textContent()).resolves.toBe(bare.configPath);
    const example = (await page.locator("#setup-example").textContent()) ?? "";
    expect(example.split("\n")).toHaveLength(3);
    const parsed = JSON5.parse(example) as {
      inbound: { reply: { agent: { baseUrl: string; model: string } } };
    };
    expect(parsed.inbound.reply.agent).toEqual({
      baseUrl: "http://127.0.0.1:11434/v1",
      model: "qwen2.5:14b",
    });
    await page.screenshot({ path: join(bare.dir, "webchat-no-model.png") });
    expect(problemsOf()).toEqual([]);
  });

  it("replaces the conversation with the new session's empty view on /new, in every tab", async () => {
    const a = await freshChat();
    const b = await open();
    await send(a.page, "something to forget");
    for (const chat of [a, b])
      await chat.page.waitForSelector(
        '[data-role="assistant"][data-final="true"] >> text="echo: something to forget"',
      );
    await expect(a.page.locator("#welcome").isHidden()).resolves.toBe(true);

    await send(a.page, "/new");
    await a.page.waitForSelector('[data-role="notice"] >> text="New session started."');
    for (const chat of [a, b]) {
      // The old exchange is gone; the empty view of the new session shows (the deadline names what never came).
      await chat.page.waitForSelector("#welcome", { state: "visible", timeout: 10_000 });
      await expect(texts(chat.page, '[data-role="assistant"] .text')).resolves.toEqual([]);
      await expect(texts(chat.page, '[data-role="user"] .text')).resolves.not.toContain(
        "something to forget",
      );
      await expect(chat.page.locator("#welcome .welcome-session").textContent()).resolves.toBe(
        `Session main · model fake-model at ${state.fake.url}`,
      );
    }
    await a.page.screenshot({ path: join(state.dir, "webchat-after-new.png") });

    // The new session goes on as usual, in both tabs.
    await send(b.page, "a fresh start");
    for (const chat of [a, b]) {
      await chat.page.waitForSelector(
        '[data-role="assistant"][data-final="true"] >> text="echo: a fresh start"',
      );
      await chat.page.waitForSelector("#welcome", { state: "hidden" });
    }
    expect(problemsOf()).toEqual([]);
  });

  it("marks an old message whose turn failed as not answered, with the reason, in the history", async () => {
    const { page } = await freshChat();
    // A 400 is not retried: the turn fails.
    state.fake.enqueue({ status: 400 });
    await send(page, "this one will fail");
    await page.waitForSelector('[data-role="user"][data-status="answered"]');
    await send(page, "and this one works");
    await page.waitForSelector(
      '[data-role="assistant"][data-final="true"] >> text="echo: and this one works"',
    );
    await page.reload();
    await page.waitForSelector('body[data-state="ready"]');
    const failed = page.locator('[data-role="user"][data-unanswered]');
    await expect(failed.count()).resolves.toBe(1);
    await expect(failed.locator(".text").textContent()).resolves.toBe("this one will fail");
    await expect(failed.locator(".unanswered").textContent()).resolves.toMatch(
      /^Not answered: the turn failed \(.+\)\.$/,
    );
    await expect(page.locator('[data-role="user"]:not([data-unanswered])').count()).resolves.toBe(1);
    expect(problemsOf()).toEqual([]);
  });

  it("searches every conversation from the header and opens a hit in its session, marked", async () => {
    const { page } = await freshChat();
    expect((await gw.agent("the Pomelo tree is in the group", { session: "group:search" })).status).toBe(200);
    await page.fill("#search-input", "pomelo");
    await page.press("#search-input", "Enter");
    const hits = page.locator("#search-results .hit");
    await hits.first().waitFor();
    // Newest first: the reply (echoed by the fake model), then the message; the match marked in each.
    await expect(hits.count()).resolves.toBe(2);
    await expect(page.locator("#search-results mark").allTextContents()).resolves.toEqual([
      "Pomelo",
      "Pomelo",
    ]);
    await expect(hits.nth(1).locator(".muted").textContent()).resolves.toMatch(/ · group:search · user$/);
    const entryId = await hits.nth(1).getAttribute("data-entry-id");

    await hits.nth(1).click();
    await page.waitForURL(/\?session=group%3Asearch#hit-/);
    await page.waitForSelector('body[data-state="ready"]');
    await expect(page.locator("#session").textContent()).resolves.toBe("session group:search");
    const marked = page.locator('[data-hit="true"]');
    await marked.waitFor();
    await expect(marked.getAttribute("data-role")).resolves.toBe("user");
    await expect(marked.getAttribute("data-entry-id")).resolves.toBe(entryId);
    await expect(marked.locator(".text").textContent()).resolves.toBe("the Pomelo tree is in the group");
    // What is sent from there goes to that session.
    await send(page, "and in this group?");
    await page.waitForSelector(
      '[data-role="assistant"][data-final="true"] >> text="echo: and in this group?"',
    );
    const group = (await state.readStore())["group:search"];
    const said = (await state.messages(group!.sessionId)).map((m) => m.message.content);
    expect(said).toContain("and in this group?");
    expect(problemsOf()).toEqual([]);
  });

  it("without a model: the notice after a message names the .json5 file by its full path, and the message is marked unanswered", async () => {
    const bare = await E2eState.create({ config: { inbound: { reply: { agent: { model: undefined } } } } });
    bare.fake.models.splice(0, bare.fake.models.length, "model-a", "model-b");
    // The config is a .json5 file, the only one there: the gateway reads it.
    const json5Path = join(bare.dir, "clawdis.json5");
    await rename(bare.configPath, json5Path);
    const bgw = await bare.startGateway();
    const { page } = await open(bgw.url);
    await expect(page.locator("#setup-path").textContent()).resolves.toBe(json5Path);
    await send(page, "hello, anyone?");
    const notice = page.locator('[data-role="notice"]');
    await notice.waitFor();
    const told = (await notice.textContent()) ?? "";
    expect(told).toMatch(/^No model is configured: set inbound\.reply\.agent\.model/);
    expect(told).toContain(` in ${json5Path} (a running gateway takes it when the file is saved`);
    await page.screenshot({ path: join(bare.dir, "webchat-no-model-notice.png") });

    await page.reload();
    await page.waitForSelector('body[data-state="ready"]');
    const mine = page.locator('[data-role="user"]');
    await expect(mine.locator(".text").textContent()).resolves.toBe("hello, anyone?");
    await expect(mine.getAttribute("data-unanswered")).resolves.toBe("no model configured");
    await expect(mine.locator(".unanswered").textContent()).resolves.toBe(
      "Not answered: no model was configured.",
    );
    await page.screenshot({ path: join(bare.dir, "webchat-unanswered.png") });
    expect(problemsOf()).toEqual([]);
  });
});
