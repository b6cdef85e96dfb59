import { describe, expect, it } from "vitest";
import { formatSessionLogLine, SESSION_LOG_MAX_BYTES, shouldRotate } from "./log-line.js";
import { SECRET_MASK } from "./log-redact.js";

const AT = new Date("2026-12-06T21:00:00.000Z");

describe("formatSessionLogLine", () => {
  it.each([
    [
      "a turn line: time, kind, fields in order",
      "turn",
      { channel: "telegram", sender: "42", durationMs: 1200, tokensIn: 10, tokensOut: 5, stop: "end" },
      "2026-12-06T21:00:00.000Z turn channel=telegram sender=42 durationMs=1200 tokensIn=10 tokensOut=5 stop=end",
    ],
    [
      "undefined fields are left out",
      "model",
      { model: "m", tokensIn: undefined },
      "2026-12-06T21:00:00.000Z model model=m",
    ],
    [
      "a value with a space is quoted",
      "tool",
      { args: '{command: "ls"}' },
      '2026-12-06T21:00:00.000Z tool args="{command: \\"ls\\"}"',
    ],
    [
      "a line break never splits the line",
      "x",
      { error: "a\nb" },
      '2026-12-06T21:00:00.000Z x error="a\\nb"',
    ],
    ['an empty string shows as ""', "x", { why: "" }, '2026-12-06T21:00:00.000Z x why=""'],
    [
      "a kind or key with odd characters is one word",
      "ap proval",
      { "a b": true },
      "2026-12-06T21:00:00.000Z ap_proval a_b=true",
    ],
    [
      "a secret in any string field is masked",
      "approval",
      { command: "echo s3cret-value" },
      `2026-12-06T21:00:00.000Z approval command="echo ${SECRET_MASK}"`,
    ],
  ])("%s", (_name, kind, fields, expected) => {
    expect(formatSessionLogLine(AT, kind, fields, ["s3cret-value"])).toBe(expected);
  });
});

describe("shouldRotate", () => {
  it.each([
    ["an empty file never rotates, even for a write past the limit", 0, 2000, 1000, false],
    ["a write that stays within the limit", 500, 500, 1000, false],
    ["a write that would pass the limit", 600, 500, 1000, true],
    ["a file already past the limit", 1500, 1, 1000, true],
  ])("%s", (_name, size, adding, limit, expected) => {
    expect(shouldRotate(size, adding, limit)).toBe(expected);
  });

  it("rotates at 1 MB by default", () => {
    expect(SESSION_LOG_MAX_BYTES).toBe(1024 * 1024);
    expect(shouldRotate(SESSION_LOG_MAX_BYTES - 10, 11)).toBe(true);
    expect(shouldRotate(SESSION_LOG_MAX_BYTES - 10, 10)).toBe(false);
  });
});
