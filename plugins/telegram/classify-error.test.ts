import { GrammyError, HttpError } from "grammy";
import { describe, expect, it } from "vitest";
import { classifyError, pollBackoffMs } from "./classify-error.js";

const telegram = (code: number, description: string, method = "getUpdates", retry_after?: number) =>
  new GrammyError(
    `Call to '${method}' failed!`,
    { ok: false, error_code: code, description, ...(retry_after ? { parameters: { retry_after } } : {}) },
    method,
    {},
  );

describe("classifyError", () => {
  it.each([
    [
      "telegram.botToken",
      "Telegram says 401: Unauthorized — check telegram.botToken (from @BotFather; saving the file is enough)",
    ],
    [
      undefined,
      "Telegram says 401: Unauthorized — check telegram.botToken (from @BotFather; saving the file is enough)",
    ],
    [
      "TELEGRAM_BOT_TOKEN",
      "Telegram says 401: Unauthorized — check TELEGRAM_BOT_TOKEN (from @BotFather), then restart the gateway",
    ],
  ])("a 401 with the token from %s says what to fix and what brings it back", (source, message) => {
    expect(classifyError(telegram(401, "Unauthorized"), source)).toEqual({ kind: "unauthorized", message });
  });

  it.each([
    [telegram(401, "Unauthorized"), "unauthorized", /check telegram\.botToken/],
    [telegram(404, "Not Found", "getMe"), "unauthorized", /check telegram\.botToken/],
    [telegram(409, "Conflict: terminated by other getUpdates request"), "conflict", /Stop the other one/],
    [
      telegram(400, "Bad Request: can't parse entities: Unsupported start tag"),
      "bad-entities",
      /can't parse/,
    ],
    [telegram(502, "Bad Gateway"), "network", /502/],
    [telegram(403, "Forbidden: bot was blocked by the user"), "refused", /403: Forbidden: bot was blocked/],
    [
      new HttpError("Network request for 'getUpdates' failed!", new Error("ECONNREFUSED")),
      "network",
      /ECONNREFUSED/,
    ],
  ])("%s", (error, kind, message) => {
    const failure = classifyError(error);
    expect(failure.kind).toBe(kind);
    expect(failure.message).toMatch(message);
  });

  it("a send refused with 400 or 403 is permanent (the chat is gone, the bot blocked); 5xx, 401 and 404 are not", () => {
    const permanent = (error: GrammyError) => {
      const failure = classifyError(error);
      return failure.kind === "refused" && failure.permanent;
    };
    expect(permanent(telegram(400, "Bad Request: chat not found", "sendMessage"))).toBe(true);
    expect(permanent(telegram(403, "Forbidden: bot was blocked by the user", "sendMessage"))).toBe(true);
    expect(
      permanent(telegram(403, "Forbidden: bot is not a member of the supergroup chat", "sendDocument")),
    ).toBe(true);
    expect(permanent(telegram(404, "Not Found", "sendMessage"))).toBe(false);
    expect(permanent(telegram(401, "Unauthorized", "sendMessage"))).toBe(false);
    expect(permanent(telegram(502, "Bad Gateway", "sendMessage"))).toBe(false);
  });

  it("429 carries Telegram's retry_after in milliseconds", () => {
    expect(classifyError(telegram(429, "Too Many Requests: retry after 7", "sendMessage", 7))).toMatchObject({
      kind: "rate-limit",
      retryAfterMs: 7000,
    });
  });
});

describe("pollBackoffMs", () => {
  it("doubles from 1 s to at most 60 s, with up to 25 % jitter on top", () => {
    expect([1, 2, 3, 7, 20].map((n) => pollBackoffMs(n, () => 0))).toEqual([
      1000, 2000, 4000, 60_000, 60_000,
    ]);
    expect(pollBackoffMs(1, () => 1)).toBe(1250);
    expect(pollBackoffMs(3, () => 0.5)).toBe(4500);
  });
});
