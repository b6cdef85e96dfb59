import { describe, expect, it } from "vitest";
import { type CleanupLimits, planCleanup, type SizedEntry } from "./plan-cleanup.js";

const DAY = 24 * 60 * 60 * 1000;
const MB = 1024 * 1024;
const NOW = Date.parse("2026-06-01T12:00:00Z");

/** An entry last active `days` ago (undefined: no time at all), its files `mb` big. */
function s(key: string, days: number | undefined, mb = 0): SizedEntry {
  const entry =
    days === undefined
      ? ({ sessionId: `id-${key}` } as unknown as SizedEntry["entry"])
      : { sessionId: `id-${key}`, updatedAt: NOW - days * DAY, lastInteractionAt: NOW - days * DAY };
  return { key, entry, bytes: mb * MB };
}

describe("planCleanup", () => {
  const cases: {
    name: string;
    sessions: SizedEntry[];
    limits: CleanupLimits;
    busy?: string[];
    prune: [string, string][];
    unmet?: string[];
  }[] = [
    {
      name: "no limits: nothing",
      sessions: [s("main", 400), s("group:a", 400)],
      limits: {},
      prune: [],
    },
    {
      name: "pruneAfterDays: the old ones, never the primary key",
      sessions: [s("main", 90), s("group:a", 31), s("group:b", 29), s("dm:c", 60)],
      limits: { pruneAfterDays: 30 },
      prune: [
        ["dm:c", "stale"],
        ["group:a", "stale"],
      ],
    },
    {
      name: "a key added by hand is like any other; one with no time is kept",
      sessions: [s("main", 1), s("my-notes", 45), s("odd", undefined)],
      limits: { pruneAfterDays: 30 },
      prune: [["my-notes", "stale"]],
    },
    {
      name: "a busy session is never pruned",
      sessions: [s("main", 1), s("group:a", 45), s("group:b", 50)],
      limits: { pruneAfterDays: 30 },
      busy: ["group:b"],
      prune: [["group:a", "stale"]],
    },
    {
      name: "maxEntries: the oldest others go until the count fits (the primary counts but stays)",
      sessions: [s("main", 100), s("a", 3), s("b", 1), s("c", 2)],
      limits: { maxEntries: 2 },
      prune: [
        ["a", "max-entries"],
        ["c", "max-entries"],
      ],
    },
    {
      name: "maxEntries after pruneAfterDays: stale ones count first",
      sessions: [s("main", 0), s("a", 40), s("b", 2), s("c", 1)],
      limits: { pruneAfterDays: 30, maxEntries: 2 },
      prune: [
        ["a", "stale"],
        ["b", "max-entries"],
      ],
    },
    {
      name: "maxDiskMb: the oldest others go until the files fit",
      sessions: [s("main", 0, 5), s("a", 3, 4), s("b", 2, 4), s("c", 1, 4)],
      limits: { maxDiskMb: 10 },
      prune: [
        ["a", "max-disk"],
        ["b", "max-disk"],
      ],
    },
    {
      name: "a limit only the primary key breaks is named unmet, not met by pruning it",
      sessions: [s("main", 0, 50), s("a", 3, 1)],
      limits: { maxDiskMb: 10, maxEntries: 0 },
      prune: [["a", "max-entries"]],
      unmet: ["max-entries", "max-disk"],
    },
    {
      name: "equal times: the key decides, not the store's order",
      sessions: [s("main", 0), s("z", 5), s("y", 5)],
      limits: { maxEntries: 2 },
      prune: [["y", "max-entries"]],
    },
  ];
  for (const c of cases) {
    it(c.name, () => {
      const plan = planCleanup({
        sessions: c.sessions,
        primaryKey: "main",
        busy: new Set(c.busy ?? []),
        now: NOW,
        limits: c.limits,
      });
      expect(plan.prune.map((p) => [p.key, p.reason])).toEqual(c.prune);
      expect(plan.unmet).toEqual(c.unmet ?? []);
      expect(plan.entries).toEqual({ before: c.sessions.length, after: c.sessions.length - c.prune.length });
    });
  }

  it("counts the bytes before and after, and says each pruned entry's session id and time", () => {
    const plan = planCleanup({
      sessions: [s("main", 0, 1), s("a", 40, 2)],
      primaryKey: "main",
      busy: new Set(),
      now: NOW,
      limits: { pruneAfterDays: 30 },
    });
    expect(plan.bytes).toEqual({ before: 3 * MB, after: 1 * MB });
    expect(plan.prune).toEqual([
      { key: "a", sessionId: "id-a", reason: "stale", lastActiveAt: NOW - 40 * DAY, bytes: 2 * MB },
    ]);
  });
});
