import { describe, expect, it } from "vitest";
import { MAX_SESSION_KEY_LENGTH, whyInvalidSessionKey } from "./session-key-rules.js";

describe("whyInvalidSessionKey", () => {
  it.each([
    "main",
    "group:12036302@g.us",
    "group:-1001234",
    "telegram:12345",
    "hook:deploy",
    "constructor",
    "__proto__",
    "toString",
    "ünïcødé 😀 key",
    "k".repeat(MAX_SESSION_KEY_LENGTH),
  ])("accepts %j", (key) => {
    expect(whyInvalidSessionKey(key)).toBeUndefined();
  });

  it.each([
    ["empty", "", /must not be empty/],
    [
      "257 characters",
      "k".repeat(MAX_SESSION_KEY_LENGTH + 1),
      /at most 256 characters long; this one has 257/,
    ],
    ["100,000 characters", "k".repeat(100_000), /this one has 100000/],
    ["a newline", "line\nbreak", /control characters \(U\+000A at position 5\)/],
    ["a NUL", "nul\0", /U\+0000 at position 4/],
    ["a tab", "tab\there", /U\+0009/],
    ["DEL", "del\u007f", /U\+007F/],
    ["a C1 control", "c1\u0085", /U\+0085/],
    ["a line separator", "sep\u2028", /U\+2028/],
    ["a number", 42, /must be a string, not number/],
    ["null", null, /not null/],
    ["undefined", undefined, /not undefined/],
  ])("refuses %s", (_, key, reason) => {
    expect(whyInvalidSessionKey(key)).toMatch(reason);
  });

  it("never repeats a long key in its message", () => {
    expect((whyInvalidSessionKey("x".repeat(100_000)) ?? "").length).toBeLessThan(200);
  });
});
