import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { type Clock, ManualClock } from "../core/clock.js";
import { createMemoryLogger } from "../core/logger.js";
import { makeHeader } from "../sessions/transcript.js";
import { SessionRegistry } from "./session-registry.js";
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

  it("a thousand idle sessions arm one timer, not one each", () => {
    for (let i = 0; i < 1000; i++) {
      registry.touch(`s${i}`);
      clock.inner.advance(1);
    }
    expect(registry.size).toBe(1000);
    expect(clock.armed).toBe(1);
    for (let i = 0; i < 10; i++) registry.touch(`s${i}`); // the session due first changes each time
    expect(clock.armed).toBe(1);
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
