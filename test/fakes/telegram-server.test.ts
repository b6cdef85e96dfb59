import { Api, type GrammyError } from "grammy";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { FakeTelegram, parseTelegramHtml } from "./telegram-server.js";

const alice = { id: 7, first_name: "Alice" };
const chat = { id: 7, type: "private" as const };

describe("FakeTelegram", () => {
  let tg: FakeTelegram;
  let api: Api;
  beforeEach(async () => {
    tg = await FakeTelegram.start();
    api = new Api(tg.token, { apiRoot: tg.url });
  });
  afterEach(() => tg.close());

  it("getUpdates: an offset confirms what is below it; a long poll waits for the next update", async () => {
    const first = tg.pushMessage({ chat, from: alice, text: "one" });
    expect((await api.getUpdates({ timeout: 0 })).map((u) => u.update_id)).toEqual([first]);
    expect((await api.getUpdates({ timeout: 0 })).map((u) => u.update_id)).toEqual([first]);
    const waiting = api.getUpdates({ offset: first + 1, timeout: 30 });
    await tg.waitFor(() => tg.polling, "the long poll");
    const second = tg.pushMessage({ chat, from: alice, text: "two" });
    expect((await waiting).map((u) => u.message?.text)).toEqual(["two"]);
    expect(tg.pending()).toEqual([second]);
  });

  it("a second concurrent poll ends the first with 409; a set webhook refuses polling", async () => {
    const older = api.getUpdates({ timeout: 30 }).catch((e: unknown) => e);
    await tg.waitFor(() => tg.polling, "the first poll");
    const newer = api.getUpdates({ timeout: 30 });
    expect(((await older) as GrammyError).error_code).toBe(409);
    tg.pushMessage({ chat, from: alice, text: "x" });
    expect(await newer).toHaveLength(1);
    await api.setWebhook("http://127.0.0.1:1/hook", { secret_token: "s" });
    await expect(api.getUpdates()).rejects.toThrow(/webhook is active/);
  });

  it("validates HTML entities and the 4096 limit like Telegram; a wrong token is 401", async () => {
    await expect(api.sendMessage(7, "<b>open", { parse_mode: "HTML" })).rejects.toThrow(
      /can't parse entities/,
    );
    await expect(api.sendMessage(7, "x".repeat(4097))).rejects.toThrow(/message is too long/);
    await api.sendMessage(7, `<b>${"x".repeat(4096)}</b>`, { parse_mode: "HTML" });
    expect(tg.sent).toHaveLength(1);
    const wrong = new Api("1:wrong", { apiRoot: tg.url });
    await expect(wrong.getMe()).rejects.toMatchObject({ error_code: 401 });
  });

  it("injects errors per method, retry_after included", async () => {
    tg.failNext("sendMessage", { status: 429, description: "Too Many Requests", retryAfter: 5 });
    const error = (await api.sendMessage(7, "x").catch((e: unknown) => e)) as GrammyError;
    expect(error.parameters.retry_after).toBe(5);
    await api.sendMessage(7, "x");
    expect(tg.textsTo(7)).toEqual(["x"]);
  });

  it.each([
    ["<b>a</b> &lt;&amp;&gt;", "a <&>"],
    ['<a href="https://x">l</a><pre><code class="language-ts">c</code></pre>', "lc"],
  ])("parses %s", (html, text) => {
    expect(parseTelegramHtml(html)).toEqual({ text });
  });

  it.each(["<b>x</i>", "<div>x</div>", "a & b", "<b>x"])("refuses %s", (html) => {
    expect(parseTelegramHtml(html)).toHaveProperty("error", expect.stringContaining("can't parse entities"));
  });
});
