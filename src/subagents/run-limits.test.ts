import { describe, expect, it } from "vitest";
import { MAX_RUNS_PER_SESSION, MAX_RUNS_TOTAL, spawnRefusal } from "./run-limits.js";

describe("spawnRefusal", () => {
  it.each([
    [{ inSession: 0, total: 0 }, undefined],
    [{ inSession: MAX_RUNS_PER_SESSION - 1, total: MAX_RUNS_TOTAL - 1 }, undefined],
    [
      { inSession: MAX_RUNS_PER_SESSION, total: MAX_RUNS_PER_SESSION },
      /this session already has 3 sub-agents running \(at most 3\)/,
    ],
    [
      { inSession: 0, total: MAX_RUNS_TOTAL },
      /8 sub-agents are running in all \(at most 8\); try again later/,
    ],
    [{ inSession: MAX_RUNS_PER_SESSION, total: MAX_RUNS_TOTAL }, /this session already has/],
  ] as const)("%o -> %s", (live, expected) => {
    const refused = spawnRefusal(live);
    if (expected === undefined) expect(refused).toBeUndefined();
    else expect(refused).toMatch(expected);
  });
});
