import { describe, expect, it } from "vitest";
import { parseSince } from "./search-since.js";

const NOW = Date.parse("2026-03-10T12:00:00Z");

describe("--since", () => {
  it.each([
    ["30m", NOW - 30 * 60_000],
    ["12h", NOW - 12 * 3_600_000],
    ["7d", NOW - 7 * 86_400_000],
    ["2w", NOW - 14 * 86_400_000],
    [" 1d ", NOW - 86_400_000],
    ["2026-03-01T09:00:00Z", Date.parse("2026-03-01T09:00:00Z")],
    ["2026-03-01T09:00+02:00", Date.parse("2026-03-01T07:00:00Z")],
    ["2026-03-01", new Date(2026, 2, 1).getTime()],
    ["2026-03-01 09:30", new Date(2026, 2, 1, 9, 30).getTime()],
  ])("%j", (value, expected) => {
    expect(parseSince(value, NOW)).toBe(expected);
  });

  it.each(["", "7", "d", "7 days", "-1d", "1.5h", "2026-13-45", "yesterday", "7y"])("refuses %j", (value) => {
    expect(parseSince(value, NOW)).toMatch(/since must be a duration like 30m/);
  });
});
