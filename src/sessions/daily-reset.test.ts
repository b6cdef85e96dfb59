import { describe, expect, it } from "vitest";
import { latestResetAt, passedDailyReset } from "./daily-reset.js";
import { decideSession } from "./lifecycle.js";

const utc = (iso: string) => Date.parse(iso);

describe("latestResetAt", () => {
  const cases: [string, string, string, string, string][] = [
    // name, at, now, zone, expected
    ["after the hour today", "04:00", "2026-03-10T05:00:00Z", "UTC", "2026-03-10T04:00:00Z"],
    ["before the hour: yesterday's", "04:00", "2026-03-10T03:59:59Z", "UTC", "2026-03-09T04:00:00Z"],
    ["exactly at the hour", "04:00", "2026-03-10T04:00:00Z", "UTC", "2026-03-10T04:00:00Z"],
    ["a zone east of UTC", "04:00", "2026-07-10T03:00:00Z", "Europe/Berlin", "2026-07-10T02:00:00Z"],
    ["a zone west of UTC", "04:00", "2026-07-10T10:00:00Z", "America/New_York", "2026-07-10T08:00:00Z"],
    // Europe/Berlin springs forward on 2026-03-29 at 02:00 → 03:00: 02:30 does not exist that day.
    [
      "spring forward: a time skipped moves forward by the gap (02:30 → 03:30 CEST)",
      "02:30",
      "2026-03-29T02:00:00Z",
      "Europe/Berlin",
      "2026-03-29T01:30:00Z",
    ],
    [
      "the day before the spring change",
      "04:00",
      "2026-03-29T01:30:00Z",
      "Europe/Berlin",
      "2026-03-28T03:00:00Z",
    ],
    [
      "the day of the spring change (summer time)",
      "04:00",
      "2026-03-29T03:00:00Z",
      "Europe/Berlin",
      "2026-03-29T02:00:00Z",
    ],
    // Europe/Berlin falls back on 2026-10-25 at 03:00 → 02:00: 02:30 happens twice and counts the first time.
    [
      "fall back: the twice-seen hour counts once, the first time",
      "02:30",
      "2026-10-25T01:45:00Z",
      "Europe/Berlin",
      "2026-10-25T00:30:00Z",
    ],
    [
      "the day of the autumn change (winter time)",
      "04:00",
      "2026-10-25T03:30:00Z",
      "Europe/Berlin",
      "2026-10-25T03:00:00Z",
    ],
  ];
  for (const [name, at, now, zone, expected] of cases) {
    it(name, () => {
      expect(new Date(latestResetAt(at, utc(now), zone) ?? 0).toISOString()).toBe(
        new Date(utc(expected)).toISOString(),
      );
    });
  }

  it("is undefined for a time that is not HH:MM", () => {
    expect(latestResetAt("4am", utc("2026-03-10T05:00:00Z"), "UTC")).toBeUndefined();
  });
});

describe("passedDailyReset", () => {
  const cases: [string, string, string, string, boolean][] = [
    // name, last, now, zone, expected (at 04:00)
    ["last before the hour, now after it", "2026-03-10T03:59:00Z", "2026-03-10T04:01:00Z", "UTC", true],
    ["both after the hour", "2026-03-10T04:00:00Z", "2026-03-10T23:59:00Z", "UTC", false],
    ["both before the hour", "2026-03-10T01:00:00Z", "2026-03-10T03:59:59Z", "UTC", false],
    ["yesterday evening, now before the hour", "2026-03-09T22:00:00Z", "2026-03-10T03:00:00Z", "UTC", false],
    ["days ago", "2026-03-01T12:00:00Z", "2026-03-10T03:00:00Z", "UTC", true],
    ["a last time in the future never resets", "2026-03-11T12:00:00Z", "2026-03-10T12:00:00Z", "UTC", false],
    // 04:00 in Tokyo is 19:00 UTC the day before.
    [
      "the zone decides: 04:00 Tokyo passed",
      "2026-03-10T18:00:00Z",
      "2026-03-10T19:30:00Z",
      "Asia/Tokyo",
      true,
    ],
    [
      "the zone decides: 04:00 UTC did not pass",
      "2026-03-10T18:00:00Z",
      "2026-03-10T19:30:00Z",
      "UTC",
      false,
    ],
    // New York springs forward on 2026-03-08 at 02:00: 04:00 EDT is 08:00 UTC (the day before, 04:00 EST was 09:00).
    [
      "DST: the reset follows the wall clock, not 24 hours",
      "2026-03-08T07:30:00Z",
      "2026-03-08T08:30:00Z",
      "America/New_York",
      true,
    ],
    [
      "DST: a 24-hour count would have reset here",
      "2026-03-08T08:30:00Z",
      "2026-03-08T08:45:00Z",
      "America/New_York",
      false,
    ],
  ];
  for (const [name, last, now, zone, expected] of cases) {
    it(name, () => {
      expect(passedDailyReset(utc(last), "04:00", utc(now), zone)).toBe(expected);
    });
  }
});

describe("decideSession with a daily reset", () => {
  const daily = { at: "04:00", timeZone: "UTC" };
  const entry = (last: string) => ({ sessionId: "s1", updatedAt: utc(last), lastInteractionAt: utc(last) });
  const base = { transcriptExists: true, reset: false };

  it("starts afresh after the hour passed, though idleMinutes has not run out", () => {
    const decision = decideSession({
      ...base,
      entry: entry("2026-03-10T03:50:00Z"),
      now: utc("2026-03-10T04:05:00Z"),
      idleMinutes: 60,
      daily,
    });
    expect(decision).toEqual({ action: "fresh", reason: "daily" });
  });

  it("idle comes first when it ran out before the hour", () => {
    const decision = decideSession({
      ...base,
      entry: entry("2026-03-10T01:00:00Z"),
      now: utc("2026-03-10T04:05:00Z"),
      idleMinutes: 60,
      daily,
    });
    expect(decision).toEqual({ action: "fresh", reason: "idle" });
  });

  it("continues when the hour did not pass, and without a daily reset", () => {
    const input = {
      ...base,
      entry: entry("2026-03-10T04:01:00Z"),
      now: utc("2026-03-10T04:30:00Z"),
      idleMinutes: 60,
    };
    expect(decideSession({ ...input, daily })).toEqual({ action: "continue", sessionId: "s1" });
    const across = { ...input, entry: entry("2026-03-10T03:50:00Z"), now: utc("2026-03-10T04:05:00Z") };
    expect(decideSession(across)).toEqual({ action: "continue", sessionId: "s1" });
  });
});
