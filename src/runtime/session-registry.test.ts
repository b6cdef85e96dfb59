import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { type Clock, ManualClock } from "../core/clock.js";
import { createMemoryLogger } from "../core/logger.js";
import { makeHeader } from "../sessions/transcript.js";
import {
  COLLECT_MAX_WAIT_MS,
  COLLECT_QUIET_MS,
  COMPACT_AFTER_MS,
  RELEASES_BEFORE_COLLECTION,
  SessionRegistry,
} from "./session-registry.js";
import { readResumeCached } from "./tail-cache.js";

/** A manual clock that knows how many of its timers are armed. */
class CountingClock implements Clock {
  readonly inner = new ManualClock(0);
  private readonly live = new Set<unknown>();
  get armed(): number {
    return this.live.size;
  }
  now(): number {
    return this.inner.now();
  }
  setTimeout(fn: () => void, ms: number): unknown {
    const handle = this.inner.setTimeout(() => {
      this.live.delete(handle);
      fn();
    }, ms);
    this.live.add(handle);
    return handle;
  }
  clearTimeout(handle: unknown): void {
    this.live.delete(handle);
    this.inner.clearTimeout(handle);
  }
}

describe("SessionRegistry: the idle time of all sessions on one timer", () => {
  let clock: CountingClock;
  let registry: SessionRegistry;
  let minutes: number;
  const busy = new Set<string>();
  /** Keys whose final save began, with the time. */
  let saved: [string, number][];
  beforeEach(() => {
    clock = new CountingClock();
    minutes = 1;
    saved = [];
    busy.clear();
    registry = new SessionRegistry({
      clock,
      get passivateAfterMinutes() {
        return minutes;
      },
      busy: (key) => busy.has(key),
      save: async (session) => {
        saved.push([session.key, clock.now()]);
      },
      logger: createMemoryLogger().logger,
      graceMs: 5_000,
    });
  });
  afterEach(async () => {
    registry.stop();
    await registry.settled();
  });

  /** Moves the clock and lets the final saves it started finish. */
  async function advance(ms: number): Promise<void> {
    clock.inner.advance(ms);
    await registry.settled();
  }

  it("holds each loaded session's phase: ready, recovering for a replay, passivating, ready again on new work", async () => {
    registry.touch("a");
    registry.touch("r", true);
    expect(registry.phaseOf("a")).toBe("ready");
    expect(registry.phaseOf("r")).toBe("recovering");
    expect(registry.phaseOf("none")).toBeUndefined();
    registry.enter("r", "processing");
    registry.enter("r", "compacting");
    registry.enter("r", "processing");
    registry.enter("r", "ready");
    expect(registry.phaseOf("r")).toBe("ready");
    await advance(60_000); // a and r idle for the limit: final save, then the grace period
    expect(registry.phaseOf("a")).toBe("passivating");
    registry.touch("a"); // a message during passivating aborts it
    expect(registry.phaseOf("a")).toBe("ready");
    await advance(5_000);
    expect(registry.phaseOf("r")).toBeUndefined(); // unloaded
    expect(registry.phaseOf("a")).toBe("ready");
  });

  it("an illegal phase transition throws and is logged with the session key", () => {
    const memory = createMemoryLogger();
    const strict = new SessionRegistry({
      clock,
      passivateAfterMinutes: 0,
      busy: () => false,
      save: async () => {},
      logger: memory.logger,
    });
    strict.touch("k");
    expect(() => strict.enter("k", "compacting")).toThrow(
      "illegal session phase transition ready -> compacting",
    );
    expect(strict.phaseOf("k")).toBe("ready");
    expect(memory.lines).toContainEqual(
      expect.objectContaining({
        level: "error",
        message: "illegal session phase transition",
        fields: expect.objectContaining({ sessionKey: "k", from: "ready", to: "compacting" }),
      }),
    );
    expect(() => strict.enter("gone", "processing")).toThrow("not loaded");
    strict.stop();
  });

  it("a thousand idle sessions arm one timer, not one each", () => {
    for (let i = 0; i < 1000; i++) {
      registry.touch(`s${i}`);
      clock.inner.advance(1);
    }
    expect(registry.size).toBe(1000);
    // One idle timer, and the burst's collection timer (one for the whole burst, too).
    expect(clock.armed).toBe(2);
    for (let i = 0; i < 10; i++) registry.touch(`s${i}`); // the session due first changes each time
    expect(clock.armed).toBe(2);
  });

  it("each session is saved exactly at its idle time, in order of last use; a touch moves it last", async () => {
    registry.touch("a");
    await advance(10_000);
    registry.touch("b");
    await advance(10_000);
    registry.touch("c");
    await advance(10_000);
    registry.touch("a"); // at 30 s: due at 90 s now
    await advance(39_999); // 69.999 s
    expect(saved).toEqual([]);
    await advance(1);
    expect(saved).toEqual([["b", 70_000]]);
    await advance(10_000);
    expect(saved).toEqual([
      ["b", 70_000],
      ["c", 80_000],
    ]);
    await advance(10_000);
    expect(saved.map(([key]) => key)).toEqual(["b", "c", "a"]);
    expect(saved.at(-1)).toEqual(["a", 90_000]);
    await advance(5_000); // a's grace period; b and c were released before
    expect(registry.size).toBe(0);
    expect(clock.armed).toBe(0);
  });

  it("a busy session is looked at again one idle time later, and saved once its work is over", async () => {
    registry.touch("a");
    busy.add("a");
    await advance(60_000);
    expect(saved).toEqual([]);
    busy.delete("a");
    await advance(59_999);
    expect(saved).toEqual([]);
    await advance(1);
    expect(saved).toEqual([["a", 120_000]]);
  });

  it("a longer idle limit set while running is applied when the timer fires; a shorter one at the next touch", async () => {
    registry.touch("a");
    registry.touch("b");
    minutes = 2;
    await advance(60_000);
    expect(saved).toEqual([]);
    await advance(60_000);
    expect(saved.map(([key]) => key)).toEqual(["a", "b"]);
    await advance(5_000);
    registry.touch("c"); // at 125 s, due at 245 s
    minutes = 0.5;
    registry.touch("d"); // reorders: c due at 155 s, d at 155 s
    await advance(30_000);
    expect(saved.slice(2)).toEqual([
      ["c", 155_000],
      ["d", 155_000],
    ]);
  });

  it("passivation off (0) arms nothing", () => {
    minutes = 0;
    for (let i = 0; i < 10; i++) registry.touch(`s${i}`);
    expect(clock.armed).toBe(0);
  });
});

describe("SessionRegistry: a warm session keeps one shape", () => {
  let dir: string;
  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), "clawdis-registry-"));
  });
  afterEach(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it("every field is there from the start and stays when released (set to undefined, never deleted)", async () => {
    const registry = new SessionRegistry({
      clock: new ManualClock(0),
      passivateAfterMinutes: 60,
      busy: () => false,
      save: async () => {},
      logger: createMemoryLogger().logger,
      limits: { openTranscripts: 1, tailBytes: 1 },
    });
    const header = makeHeader("s", "a", new Date(0));
    const a = registry.touch("a");
    const keys = Object.keys(a);
    expect(keys).toEqual(
      expect.arrayContaining(["tail", "transcript", "transcriptPath", "resumes", "pending"]),
    );
    const path = join(dir, "a.jsonl");
    const writer = await registry.writerFor(a, path);
    await writer?.append(
      [{ type: "message", id: "m", ts: header.createdAt, message: { role: "user", content: "x" } }],
      {
        header,
      },
    );
    await readResumeCached(a, path, 64 * 1024, { keep: true });
    expect(a.tail).toBeDefined();
    registry.touch("a"); // the end of its work: what it holds is counted
    registry.touch("b"); // over both limits: a gives up its tail and its transcript
    await registry.writerFor(registry.touch("b"), join(dir, "b.jsonl"));
    expect(a.tail).toBeUndefined();
    expect(a.transcript).toBeUndefined();
    expect(Object.keys(a)).toEqual(keys);
    registry.stop();
    await registry.settled();
  });
});

describe("SessionRegistry: a burst of work or of unloads gives the memory back", () => {
  /** A registry whose collections are counted; `n` sessions touched `spacingMs` apart from time 0. */
  async function burst(n: number, spacingMs: number, passivateAfterMinutes = 1) {
    const clock = new ManualClock(0);
    const collectedAt: number[] = [];
    /** Whether each collection compacted, parallel to collectedAt. */
    const compacted: boolean[] = [];
    const registry = new SessionRegistry({
      clock,
      passivateAfterMinutes,
      busy: () => false,
      save: async () => {},
      logger: createMemoryLogger().logger,
      graceMs: 5_000,
      collectGarbage: ({ compact }) => {
        collectedAt.push(clock.now());
        compacted.push(compact === true);
      },
    });
    const advance = async (ms: number) => {
      clock.advance(ms);
      await registry.settled();
    };
    for (let i = 0; i < n; i++) {
      registry.touch(`s${i}`);
      await advance(spacingMs);
    }
    /** Steps of 10 ms until every session is unloaded. */
    const untilUnloaded = async () => {
      while (registry.size > 0) await advance(10);
    };
    return {
      registry,
      advance,
      untilUnloaded,
      collectedAt,
      compacted,
      collections: () => collectedAt.length,
    };
  }

  it("a few touches and unloads: no collection", async () => {
    // Each session counts twice: its touch and its unload.
    const few = await burst(RELEASES_BEFORE_COLLECTION / 2 - 1, 1);
    await few.untilUnloaded();
    await few.advance(COLLECT_MAX_WAIT_MS);
    expect(few.collections()).toBe(0);
    few.registry.stop();
  });

  it("a burst of messages, then a wave of unloads: after each, once quiet, a plain collection, then a compacting one", async () => {
    const many = await burst(RELEASES_BEFORE_COLLECTION + 100, 1);
    // The touches: collected once nothing happened for COLLECT_QUIET_MS.
    expect(many.collections()).toBe(0);
    await many.advance(COLLECT_QUIET_MS - 2);
    expect(many.collections()).toBe(0);
    await many.advance(2);
    expect(many.compacted).toEqual([false]);
    // The compacting one COMPACT_AFTER_MS after the plain one.
    await many.advance(COMPACT_AFTER_MS - 2);
    expect(many.compacted).toEqual([false]);
    await many.advance(2);
    expect(many.compacted).toEqual([false, true]);
    expect(many.collectedAt[1]! - many.collectedAt[0]!).toBe(COMPACT_AFTER_MS);
    // The unloads a minute later: the same again, after the last of them.
    await many.untilUnloaded();
    expect(many.collections()).toBe(2);
    await many.advance(COLLECT_QUIET_MS + COMPACT_AFTER_MS);
    expect(many.compacted).toEqual([false, true, false, true]);
    await many.advance(COLLECT_MAX_WAIT_MS);
    expect(many.collections()).toBe(4);
    many.registry.stop();
  });

  it("the compacting collection comes over 5 s after the plain one, when V8 also gives its young generation back", () => {
    // V8 shrinks the semi-spaces a burst grew only at a full collection after which the allocation it measured over
    // the last ~5 s of collections is low; the plain collection's measure still holds the burst's tail.
    expect(COMPACT_AFTER_MS).toBeGreaterThanOrEqual(5_000 + 500);
  });

  it("messages to sessions already held do not count: no collection however many there are", async () => {
    // Ten sessions loaded, then RELEASES_BEFORE_COLLECTION * 3 touches of them: nothing was loaded or unloaded.
    const held = await burst(10, 1, 0);
    for (let i = 0; i < RELEASES_BEFORE_COLLECTION * 3; i++) {
      held.registry.touch(`s${i % 10}`);
      await held.advance(1);
    }
    await held.advance(COLLECT_MAX_WAIT_MS + COLLECT_QUIET_MS);
    expect(held.registry.size).toBe(10);
    expect(held.collections()).toBe(0);
    held.registry.stop();
  });

  it("messages to held sessions after a burst keep it from being quiet, but are never collected during", async () => {
    // A burst of loads from time 0, then a message to a held session every 100 ms for 30 s (passivation off).
    const many = await burst(RELEASES_BEFORE_COLLECTION + 100, 1, 0);
    const burstEnd = many.registry.size;
    expect(burstEnd).toBe(RELEASES_BEFORE_COLLECTION + 100);
    for (let t = 0; t < 30_000; t += 100) {
      many.registry.touch(`s${(t / 100) % 10}`);
      await many.advance(100);
    }
    // Never quiet: the burst is collected once, COLLECT_MAX_WAIT_MS after it began, and not again while only held
    // sessions are touched; no compaction meanwhile.
    expect(many.collectedAt).toEqual([COLLECT_MAX_WAIT_MS]);
    expect(many.compacted).toEqual([false]);
    // Once quiet: a plain collection, then the compacting one.
    await many.advance(COLLECT_QUIET_MS + COMPACT_AFTER_MS);
    expect(many.compacted).toEqual([false, false, true]);
    await many.advance(COLLECT_MAX_WAIT_MS);
    expect(many.collections()).toBe(3);
    many.registry.stop();
  });

  it("a touch between the plain collection and the compacting one: no compaction (a new burst began)", async () => {
    const many = await burst(RELEASES_BEFORE_COLLECTION + 100, 1);
    await many.advance(COLLECT_QUIET_MS);
    expect(many.compacted).toEqual([false]);
    many.registry.touch("late");
    await many.advance(COMPACT_AFTER_MS);
    expect(many.compacted).toEqual([false]);
    many.registry.stop();
  });

  it("work that never pauses is collected every COLLECT_MAX_WAIT_MS, and compacted once it stops", async () => {
    // A touch every 100 ms (passivation off): never quiet for COLLECT_QUIET_MS.
    const steady = await burst(RELEASES_BEFORE_COLLECTION * 3, 100, 0);
    const during = steady.collections();
    // While it goes on, no collection compacts (a compaction pauses longer and needs room for what it moves).
    expect(steady.compacted).toEqual(Array(during).fill(false));
    // The first once RELEASES_BEFORE_COLLECTION touches came (at 50 s), then one every 10 s while they go on.
    expect(steady.collectedAt[0]).toBe((RELEASES_BEFORE_COLLECTION - 1) * 100);
    const gaps = steady.collectedAt.slice(1).map((at, i) => at - steady.collectedAt[i]!);
    expect(gaps.length).toBeGreaterThanOrEqual(8);
    for (const gap of gaps) expect(Math.abs(gap - COLLECT_MAX_WAIT_MS)).toBeLessThanOrEqual(100);
    // Once it stops: a plain collection once quiet, then the compacting one, then no more.
    await steady.advance(COLLECT_QUIET_MS + COMPACT_AFTER_MS);
    expect(steady.compacted.slice(during)).toEqual([false, true]);
    expect(steady.collectedAt.at(-2)).toBeGreaterThanOrEqual((RELEASES_BEFORE_COLLECTION * 3 - 1) * 100);
    const after = steady.collections();
    await steady.advance(COLLECT_MAX_WAIT_MS);
    expect(steady.collections()).toBe(after);
    steady.registry.stop();
  });
});
