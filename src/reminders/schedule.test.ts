import { describe, expect, it } from "vitest";
import { parseDuration } from "./duration.js";
import { dueFiring, instantOf, nextDueAfter, resolveWhen, type Schedulable, scheduleAt } from "./schedule.js";

const t = (iso: string) => Date.parse(iso);
const BERLIN = "Europe/Berlin";

describe("parseDuration", () => {
  it.each([
    ["90s", 90_000],
    ["20m", 1_200_000],
    ["1h30m", 5_400_000],
    ["2d", 172_800_000],
    ["1w", 604_800_000],
    ["1h 5s", 3_605_000],
    ["3S", 3000],
  ])("%s is %d ms", (text, ms) => {
    expect(parseDuration(text)).toBe(ms);
  });

  it.each(["", "20", "m", "0s", "-5m", "20 minutes", "1.5h", "20m later"])("%j is not a duration", (text) => {
    expect(parseDuration(text)).toBeUndefined();
  });
});

describe("instantOf: an ISO time with an offset as written, without one as wall time in the zone", () => {
  it.each([
    ["2026-12-24T09:00:00Z", "UTC", "2026-12-24T09:00:00.000Z"],
    ["2026-12-24T09:00+02:00", BERLIN, "2026-12-24T07:00:00.000Z"],
    ["2026-12-24T09:00", BERLIN, "2026-12-24T08:00:00.000Z"], // CET, +1
    ["2026-07-01T09:00", BERLIN, "2026-07-01T07:00:00.000Z"], // CEST, +2
    ["2026-07-01 09:00:30", "America/New_York", "2026-07-01T13:00:30.000Z"],
    ["2026-12-24", BERLIN, "2026-12-23T23:00:00.000Z"],
    // The last Sunday of March: 02:30 does not exist in Berlin; the hour after the gap is meant.
    ["2026-03-29T03:30", BERLIN, "2026-03-29T01:30:00.000Z"],
  ])("%s in %s is %s", (text, zone, iso) => {
    expect(new Date(instantOf(text, zone) ?? Number.NaN).toISOString()).toBe(iso);
  });

  it.each(["tomorrow", "2026-13-01T09:00", "09:00", "2026-12-24T25:00"])("%j is no time", (text) => {
    expect(instantOf(text, "UTC")).toBeUndefined();
  });
});

describe("resolveWhen", () => {
  const now = t("2026-12-06T10:00:00Z");
  it("reads a duration from now, an ISO time, a cron expression", () => {
    expect(resolveWhen("20m", now, "UTC")).toEqual({ at: now + 1_200_000 });
    expect(resolveWhen("3s", now, "UTC")).toEqual({ at: now + 3000 });
    expect(resolveWhen("2026-12-24T09:00", now, BERLIN)).toEqual({ at: t("2026-12-24T08:00:00Z") });
    expect(resolveWhen("0 9 * * 1-5", now, BERLIN)).toEqual({ cron: "0 9 * * 1-5" });
    expect(resolveWhen("*/10 * * * * *", now, "UTC")).toEqual({ cron: "*/10 * * * * *" });
  });

  it("refuses a past time, a bad cron expression, one that never comes, and words", () => {
    expect(resolveWhen("2026-12-01T09:00Z", now, "UTC")).toEqual({
      error: expect.stringMatching(/already passed/),
    });
    expect(resolveWhen("61 * * * *", now, "UTC")).toEqual({
      error: expect.stringMatching(/not a cron expression/),
    });
    expect(resolveWhen("0 0 30 2 *", now, "UTC")).toEqual({
      error: expect.stringMatching(/never comes due/),
    });
    expect(resolveWhen("soon", now, "UTC")).toEqual({ error: expect.stringMatching(/not a time/) });
  });
});

describe("dueFiring: what fires at `now`, for a gateway started at `startedAt`", () => {
  const at = (id: string, iso: string, extra: Partial<Schedulable> = {}): Schedulable => ({
    id,
    when: { at: t(iso) },
    createdAt: t("2026-01-01T00:00:00Z"),
    ...extra,
  });
  const cron = (id: string, expression: string, createdAt: string, lastFired?: string): Schedulable => ({
    id,
    when: { cron: expression },
    createdAt: t(createdAt),
    ...(lastFired ? { lastFired: t(lastFired) } : {}),
  });

  it.each([
    {
      name: "a one-shot not yet due",
      r: at("a", "2026-12-06T10:00:05Z"),
      now: "2026-12-06T10:00:04Z",
      started: "2026-12-06T09:00:00Z",
      want: undefined,
    },
    {
      name: "a one-shot due, on time",
      r: at("a", "2026-12-06T10:00:05Z"),
      now: "2026-12-06T10:00:05Z",
      started: "2026-12-06T09:00:00Z",
      want: { slot: "2026-12-06T10:00:05Z", late: false, missedEarlier: false },
    },
    {
      name: "a one-shot that came due while the gateway was down fires once, late",
      r: at("a", "2026-12-06T03:00:00Z"),
      now: "2026-12-06T09:00:01Z",
      started: "2026-12-06T09:00:00Z",
      want: { slot: "2026-12-06T03:00:00Z", late: true, missedEarlier: false },
    },
    {
      name: "a one-shot already fired (hand-kept lastFired) does not fire again",
      r: at("a", "2026-12-06T03:00:00Z", { lastFired: t("2026-12-06T03:00:00Z") }),
      now: "2026-12-06T09:00:01Z",
      started: "2026-12-06T09:00:00Z",
      want: undefined,
    },
    {
      name: "a repeat at its slot",
      r: cron("c", "0 9 * * *", "2026-12-01T00:00:00Z", "2026-12-05T08:00:00Z"),
      now: "2026-12-06T08:00:00Z",
      started: "2026-12-06T07:00:00Z",
      want: { slot: "2026-12-06T08:00:00Z", late: false, missedEarlier: false },
    },
    {
      name: "a repeat whose slot is fired already waits for the next",
      r: cron("c", "0 9 * * *", "2026-12-01T00:00:00Z", "2026-12-06T08:00:00Z"),
      now: "2026-12-06T08:00:30Z",
      started: "2026-12-06T07:00:00Z",
      want: undefined,
    },
    {
      name: "a repeat that missed four days of slots fires ONCE, for the latest, late",
      r: cron("c", "0 9 * * *", "2026-12-01T00:00:00Z", "2026-12-02T08:00:00Z"),
      now: "2026-12-06T12:00:00Z",
      started: "2026-12-06T11:59:00Z",
      want: { slot: "2026-12-06T08:00:00Z", late: true, missedEarlier: true },
    },
    {
      name: "a repeat every 10 seconds down for a day fires once",
      r: cron("s", "*/10 * * * * *", "2026-12-05T00:00:00Z", "2026-12-05T10:00:00Z"),
      now: "2026-12-06T10:00:07Z",
      started: "2026-12-06T10:00:05Z",
      want: { slot: "2026-12-06T10:00:00Z", late: true, missedEarlier: true },
    },
    {
      name: "a repeat counts its slots from its creation, not before",
      r: cron("c", "0 9 * * *", "2026-12-06T08:30:00Z"),
      now: "2026-12-06T08:45:00Z",
      started: "2026-12-06T07:00:00Z",
      want: undefined,
    },
    {
      name: "spring forward (Berlin, last Sunday of March): 02:30 does not exist, it fires at 03:30 CEST",
      r: cron("d", "30 2 * * *", "2026-03-27T12:00:00Z", "2026-03-28T01:30:00Z"),
      now: "2026-03-29T01:30:00Z",
      started: "2026-03-29T00:00:00Z",
      want: { slot: "2026-03-29T01:30:00Z", late: false, missedEarlier: false },
    },
    {
      name: "fall back (Berlin, last Sunday of October): 02:30 happens twice, the first one fires",
      r: cron("d", "30 2 * * *", "2026-10-23T12:00:00Z", "2026-10-24T00:30:00Z"),
      now: "2026-10-25T00:30:00Z",
      started: "2026-10-25T00:00:00Z",
      want: { slot: "2026-10-25T00:30:00Z", late: false, missedEarlier: false },
    },
    {
      name: "…and not again at the second 02:30 (01:30 UTC)",
      r: cron("d", "30 2 * * *", "2026-10-23T12:00:00Z", "2026-10-25T00:30:00Z"),
      now: "2026-10-25T01:30:00Z",
      started: "2026-10-25T00:00:00Z",
      want: undefined,
    },
    {
      name: "9:00 Berlin is 08:00 UTC before the October change and 09:00 UTC after",
      r: cron("n", "0 9 * * *", "2026-10-23T12:00:00Z", "2026-10-25T08:00:00Z"),
      now: "2026-10-26T08:00:00Z",
      started: "2026-10-25T00:00:00Z",
      want: { slot: "2026-10-26T08:00:00Z", late: false, missedEarlier: false },
    },
  ])("$name", ({ r, now, started, want }) => {
    const firing = dueFiring(r, t(now), t(started), BERLIN);
    expect(firing).toEqual(want === undefined ? undefined : { id: r.id, ...want, slot: t(want.slot) });
  });

  it("the 9:00 Berlin repeat after the October change: next at 08:00 UTC (CET)", () => {
    const r = cron("n", "0 9 * * *", "2026-10-23T12:00:00Z", "2026-10-24T07:00:00Z");
    expect(new Date(nextDueAfter(r, t("2026-10-24T12:00:00Z"), BERLIN) ?? 0).toISOString()).toBe(
      "2026-10-25T08:00:00.000Z",
    );
  });
});

describe("scheduleAt", () => {
  it("gives the firings due, oldest first, and the next time to look", () => {
    const now = t("2026-12-06T10:00:00Z");
    const plan = scheduleAt(
      [
        { id: "later", when: { at: t("2026-12-06T10:05:00Z") }, createdAt: 0 },
        { id: "due2", when: { at: t("2026-12-06T09:59:00Z") }, createdAt: 0 },
        { id: "due1", when: { at: t("2026-12-06T09:00:00Z") }, createdAt: 0 },
        { id: "rep", when: { cron: "0 * * * *" }, createdAt: t("2026-12-06T09:30:00Z") },
      ],
      now,
      t("2026-12-06T09:30:00Z"),
      "UTC",
    );
    expect(plan.fire.map((f) => [f.id, f.late])).toEqual([
      ["due1", true],
      ["due2", false],
      ["rep", false],
    ]);
    expect(plan.wakeAt).toBe(t("2026-12-06T10:05:00Z"));
  });

  it("has nothing to wait for without reminders", () => {
    expect(scheduleAt([], 0, 0, "UTC")).toEqual({ fire: [], wakeAt: undefined });
  });
});
