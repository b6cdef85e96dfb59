import { describe, expect, it } from "vitest";
import { retryDelayMs, shouldRetryAnswer } from "./model-retry.js";

const headers = (entries: Record<string, string> = {}) => new Headers(entries);

describe("shouldRetryAnswer", () => {
  it("tries 408, 409, 429 and 5xx again, nothing else, unless the server says", () => {
    const retried = [400, 401, 403, 404, 408, 409, 422, 429, 500, 502, 503, 599].filter((status) =>
      shouldRetryAnswer(status, headers()),
    );
    expect(retried).toEqual([408, 409, 429, 500, 502, 503, 599]);
    expect(shouldRetryAnswer(400, headers({ "x-should-retry": "true" }))).toBe(true);
    expect(shouldRetryAnswer(503, headers({ "x-should-retry": "false" }))).toBe(false);
    expect(shouldRetryAnswer(503, headers({ "x-should-retry": "maybe" }))).toBe(true);
  });
});

describe("retryDelayMs", () => {
  const now = Date.parse("2026-12-02T08:00:00Z");

  it("waits 0.5 s doubling up to 8 s, less up to a quarter at random", () => {
    expect([0, 1, 2, 3, 4, 5, 9].map((n) => retryDelayMs(undefined, n, now, 0))).toEqual([
      500, 1000, 2000, 4000, 8000, 8000, 8000,
    ]);
    expect(retryDelayMs(undefined, 0, now, 0.999_999)).toBeCloseTo(375, 3);
    expect(retryDelayMs(headers(), 1, now, 0.5)).toBe(875);
  });

  it("waits what the server asks: retry-after-ms first, then retry-after in seconds or as a date", () => {
    expect(retryDelayMs(headers({ "retry-after-ms": "250", "retry-after": "9" }), 0, now, 0)).toBe(250);
    expect(retryDelayMs(headers({ "retry-after": "2.5" }), 0, now, 0)).toBe(2500);
    expect(retryDelayMs(headers({ "retry-after": "120" }), 0, now, 0)).toBe(120_000);
    expect(retryDelayMs(headers({ "retry-after": "Wed, 02 Dec 2026 08:00:30 GMT" }), 0, now, 0)).toBe(30_000);
    // retry-after-ms of 0 or not a number: retry-after decides, else the backoff.
    expect(retryDelayMs(headers({ "retry-after-ms": "0", "retry-after": "3" }), 0, now, 0)).toBe(3000);
    expect(retryDelayMs(headers({ "retry-after-ms": "soon" }), 2, now, 0)).toBe(2000);
  });

  it("does not wait for a date already past or one it cannot read", () => {
    expect(retryDelayMs(headers({ "retry-after": "Wed, 02 Dec 2026 07:59:00 GMT" }), 0, now, 0)).toBe(0);
    expect(retryDelayMs(headers({ "retry-after": "tomorrow-ish" }), 0, now, 0)).toBe(0);
    expect(retryDelayMs(headers({ "retry-after-ms": "-5" }), 0, now, 0)).toBe(0);
  });
});
