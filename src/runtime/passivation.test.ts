import { describe, expect, it } from "vitest";
import { decideIdle, decideRelease, idleLimitMs } from "./passivation.js";

describe("idleLimitMs", () => {
  it.each([
    [60, 3_600_000],
    [1, 60_000],
    [0.5, 30_000],
    [0, undefined],
    [-1, undefined],
    [Number.NaN, undefined],
    [Number.POSITIVE_INFINITY, undefined],
  ])("%s minutes -> %s ms", (minutes, ms) => {
    expect(idleLimitMs(minutes)).toBe(ms);
  });
});

describe("decideIdle", () => {
  const base = { idleMs: 60_000, busy: false, lastActiveAt: 1_000, now: 1_000 };
  it.each([
    ["passivation off (0)", { idleMs: undefined }, { kind: "never" }],
    ["off wins over busy", { idleMs: undefined, busy: true }, { kind: "never" }],
    ["a running turn or queued work keeps it", { busy: true, now: 999_999 }, { kind: "busy" }],
    ["just active: wait the whole limit", {}, { kind: "wait", ms: 60_000 }],
    ["part of the way: wait the rest", { now: 41_000 }, { kind: "wait", ms: 20_000 }],
    ["one ms short", { now: 60_999 }, { kind: "wait", ms: 1 }],
    ["exactly the limit: passivate", { now: 61_000 }, { kind: "passivate" }],
    ["past the limit: passivate", { now: 500_000 }, { kind: "passivate" }],
  ])("%s", (_name, change, expected) => {
    expect(decideIdle({ ...base, ...change })).toEqual(expected);
  });
});

describe("decideRelease", () => {
  it.each([
    ["nothing happened, idle", { busy: false, activity: 3, activityAtStart: 3 }, "release"],
    ["a message during the grace period", { busy: false, activity: 4, activityAtStart: 3 }, "stay"],
    ["a turn runs", { busy: true, activity: 3, activityAtStart: 3 }, "stay"],
    ["both", { busy: true, activity: 5, activityAtStart: 3 }, "stay"],
  ])("%s -> %s", (_name, input, expected) => {
    expect(decideRelease(input)).toBe(expected);
  });
});
