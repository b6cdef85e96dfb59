import type { Browser, Page } from "playwright-core";

/** A page of the web chat, with every page error and console error it logged. */
export interface ChatPage {
  page: Page;
  problems: string[];
}

/** Opens the web chat at `url` and waits until it is ready (history loaded, composer enabled). */
export async function openChat(browser: Browser, url: string): Promise<ChatPage> {
  const page = await browser.newPage({ viewport: { width: 900, height: 640 } });
  const problems: string[] = [];
  page.on("pageerror", (error) => problems.push(`page error: ${error.message}`));
  page.on("console", (message) => {
    if (message.type() === "error") problems.push(`console: ${message.text()}`);
  });
  await page.goto(url);
  await page.waitForSelector('body[data-state="ready"]');
  return { page, problems };
}

/** Types a message into the composer and sends it. */
export async function send(page: Page, text: string): Promise<void> {
  await page.fill("#input", text);
  await page.click("#send");
}

/**
 * Starts recording, at every change of the conversation, how many assistant bubbles show a (non-empty) prefix of
 * `reply`, and their texts. `recorded(page)` reads the record.
 */
export async function recordReplyBubbles(page: Page, reply: string): Promise<void> {
  await page.evaluate((text) => {
    const w = window as unknown as { replyCounts: number[]; replyTexts: string[] };
    w.replyCounts = [];
    w.replyTexts = [];
    const messages = document.getElementById("messages");
    if (!messages) throw new Error("no #messages");
    new MutationObserver(() => {
      const shown = Array.from(messages.querySelectorAll('[data-role="assistant"] .text'))
        .map((el) => el.textContent ?? "")
        .filter((t) => t.length > 0 && text.startsWith(t));
      w.replyCounts.push(shown.length);
      if (shown.length > 0 && w.replyTexts.at(-1) !== shown[0]) w.replyTexts.push(shown[0] ?? "");
    }).observe(messages, { subtree: true, childList: true, characterData: true });
  }, reply);
}

export function recorded(page: Page): Promise<{ counts: number[]; texts: string[] }> {
  return page.evaluate(() => {
    const w = window as unknown as { replyCounts: number[]; replyTexts: string[] };
    return { counts: w.replyCounts, texts: w.replyTexts };
  });
}

/** `rgb(r, g, b)` / `rgba(r, g, b, a)` as CSS computes colours. */
export function parseRgb(css: string): [number, number, number] {
  const match = /^rgba?\((\d+), (\d+), (\d+)(?:, ([\d.]+))?\)$/.exec(css);
  if (!match) throw new Error(`not an rgb() colour: ${css}`);
  if (match[4] !== undefined && Number(match[4]) !== 1) throw new Error(`a translucent colour: ${css}`);
  return [Number(match[1]), Number(match[2]), Number(match[3])];
}

/** WCAG 2 relative luminance of an sRGB colour. */
export function luminance([r, g, b]: [number, number, number]): number {
  const lin = (c: number) => {
    const s = c / 255;
    return s <= 0.04045 ? s / 12.92 : ((s + 0.055) / 1.055) ** 2.4;
  };
  return 0.2126 * lin(r) + 0.7152 * lin(g) + 0.0722 * lin(b);
}

/** WCAG 2 contrast ratio, 1 to 21 (AA for normal text: at least 4.5). */
export function contrastRatio(a: string, b: string): number {
  const [hi, lo] = [luminance(parseRgb(a)), luminance(parseRgb(b))].sort((x, y) => y - x) as [number, number];
  return (hi + 0.05) / (lo + 0.05);
}
