import { describe, expect, it } from "vitest";
import { afterSendFailure, backoffMs, logsRetry } from "./outbox-retry.js";

describe("afterSendFailure", () => {
  it("gives up only on an error its transport marks permanent, with the error's words", () => {
    const refused = Object.assign(new Error("Telegram says 400: Bad Request: chat not found"), {
      permanent: true,
    });
    expect(afterSendFailure(refused, 1)).toEqual({
      action: "give-up",
      reason: "Telegram says 400: Bad Request: chat not found",
    });
  });

  it("retries everything else without limit: 5xx, network errors, plain throws, permanent: false", () => {
    for (const error of [
      new Error("Telegram says 502: Bad Gateway"),
      Object.assign(new Error("fetch failed"), { code: "ECONNRESET" }),
      Object.assign(new Error("x"), { permanent: false }),
      "a string",
      null,
    ]) {
      expect(afterSendFailure(error, 1000)).toEqual({ action: "retry", waitMs: 30_000, hinted: false });
    }
  });

  it("honours retryAfterMs (a 429's retry_after), also 0, and falls back to the backoff for a bad one", () => {
    expect(afterSendFailure(Object.assign(new Error("429"), { retryAfterMs: 7000 }), 1)).toEqual({
      action: "retry",
      waitMs: 7000,
      hinted: true,
    });
    expect(afterSendFailure(Object.assign(new Error("429"), { retryAfterMs: 0 }), 3)).toEqual({
      action: "retry",
      waitMs: 0,
      hinted: true,
    });
    expect(afterSendFailure(Object.assign(new Error("429"), { retryAfterMs: -1 }), 2)).toEqual({
      action: "retry",
      waitMs: 1000,
      hinted: false,
    });
  });

  it("backs off 0.5 s doubling to 30 s", () => {
    expect([1, 2, 3, 4, 7, 8, 100].map(backoffMs)).toEqual([500, 1000, 2000, 4000, 30_000, 30_000, 30_000]);
  });

  it("logs the first three retries, then every tenth", () => {
    expect([1, 2, 3, 4, 9, 10, 11, 20].map(logsRetry)).toEqual([
      true,
      true,
      true,
      false,
      false,
      true,
      false,
      true,
    ]);
  });
});
