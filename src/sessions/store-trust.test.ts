import { describe, expect, it } from "vitest";
import type { FileVersion } from "./store-read.js";
import { changedWithinTick, SAME_TICK_MS, trustedAfterRead } from "./store-trust.js";

/** A version whose ctime is `ms` epoch milliseconds (plus a sub-millisecond part). */
const at = (ms: number): FileVersion => ({
  ino: 1n,
  size: 1n,
  mtimeNs: 1n,
  ctimeNs: BigInt(ms) * 1_000_000n + 123n,
});

describe("trustedAfterRead", () => {
  it.each([
    ["read a tick after the change", 10_000, 10_000 + SAME_TICK_MS + 1, false, true],
    ["read exactly a tick after", 10_000, 10_000 + SAME_TICK_MS, false, false],
    ["read within the tick", 10_000, 10_050, false, false],
    ["read within the tick, fine change times", 10_000, 10_001, true, true],
    ["read before the change time (a clock set back)", 10_000, 9_000, false, false],
  ])("%s", (_, ctime, readAt, fine, trusted) => {
    expect(trustedAfterRead(at(ctime), readAt, fine, SAME_TICK_MS)).toBe(trusted);
  });

  it("takes the longer tick of a file system that keeps whole seconds", () => {
    expect(trustedAfterRead(at(10_000), 10_500, false, 2_100)).toBe(false);
    expect(trustedAfterRead(at(10_000), 12_101, false, 2_100)).toBe(true);
  });
});

describe("changedWithinTick", () => {
  it.each([
    [10_000, 10_050, true],
    [10_000, 10_000 + SAME_TICK_MS, false],
    [10_000, 11_000, false],
    [10_000, 9_990, true],
  ])("ctime %i at %i: %s", (ctime, now, within) => {
    expect(changedWithinTick(at(ctime), now, SAME_TICK_MS)).toBe(within);
  });
});
