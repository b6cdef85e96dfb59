import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { ManualClock } from "../core/clock.js";
import { createMemoryLogger } from "../core/logger.js";
import { openFileLimit } from "../core/open-file-limit.js";
import { makeHeader } from "../sessions/transcript.js";
import { SessionRegistry } from "./session-registry.js";
import { readResumeCached } from "./tail-cache.js";
import {
  FALLBACK_OPEN_TRANSCRIPTS,
  type Holding,
  MAX_OPEN_TRANSCRIPTS,
  MAX_WARM_TAIL_BYTES,
  MIN_OPEN_TRANSCRIPTS,
  openTranscriptsFor,
  pickReleases,
  warmLimitsFor,
} from "./warm-limits.js";

describe("openTranscriptsFor (pure)", () => {
  it.each([
    ["a quarter of the open-file limit", 20_000, 4096],
    ["a quarter of a hard limit of 4,096", 4096, 1024],
    ["a quarter of 1,024 (the usual soft limit)", 1024, 256],
    ["rounded down", 1023, 255],
    ["at most MAX_OPEN_TRANSCRIPTS", 1_048_576, MAX_OPEN_TRANSCRIPTS],
    ["at most MAX_OPEN_TRANSCRIPTS when unlimited", Number.POSITIVE_INFINITY, MAX_OPEN_TRANSCRIPTS],
    ["at least MIN_OPEN_TRANSCRIPTS", 32, MIN_OPEN_TRANSCRIPTS],
    ["the fallback when unknown", undefined, FALLBACK_OPEN_TRANSCRIPTS],
    ["the fallback for nonsense", 0, FALLBACK_OPEN_TRANSCRIPTS],
    ["the fallback for NaN", Number.NaN, FALLBACK_OPEN_TRANSCRIPTS],
  ])("%s", (_name, openFiles, expected) => {
    expect(openTranscriptsFor(openFiles)).toBe(expected);
  });

  it("a registry given no limits takes them from this process's open-file limit", () => {
    const registry = new SessionRegistry({
      clock: new ManualClock(0),
      passivateAfterMinutes: 60,
      busy: () => false,
      save: async () => {},
      logger: createMemoryLogger().logger,
    });
    expect(registry.limits).toEqual(warmLimitsFor(openFileLimit()));
  });

  it("the limits keep the tail budget whatever the descriptors", () => {
    expect(warmLimitsFor(4096)).toEqual({ openTranscripts: 1024, tailBytes: MAX_WARM_TAIL_BYTES });
  });
});

describe("pickReleases (pure)", () => {
  const h = (key: string, tailBytes: number, writer: boolean): Holding => ({ key, tailBytes, writer });
  const limits = { openTranscripts: 2, tailBytes: 100 };
  const idle = () => false;

  it.each([
    [
      "within both limits: nothing",
      [h("a", 50, true), h("b", 50, true)],
      { openTranscripts: 2, tailBytes: 100 },
      [],
    ],
    [
      "one transcript too many: the oldest writer goes, its tail stays",
      [h("a", 10, true), h("b", 10, true), h("c", 10, true)],
      { openTranscripts: 3, tailBytes: 30 },
      [{ key: "a", tail: false, writer: true }],
    ],
    [
      "tails over the bytes: the oldest tails go until under, writers stay",
      [h("a", 60, true), h("b", 30, false), h("c", 40, true)],
      { openTranscripts: 2, tailBytes: 130 },
      [{ key: "a", tail: true, writer: false }],
    ],
    [
      "both over: one session can give up both",
      [h("a", 80, true), h("b", 40, true), h("c", 40, true)],
      { openTranscripts: 3, tailBytes: 160 },
      [{ key: "a", tail: true, writer: true }],
    ],
  ])("%s", (_name, holdings, totals, expected) => {
    expect(pickReleases(holdings, totals, limits, idle)).toEqual(expected);
  });

  it("passes over busy sessions, even when that leaves the totals over", () => {
    const holdings = [h("busy", 500, true), h("b", 50, true), h("c", 10, true)];
    expect(
      pickReleases(holdings, { openTranscripts: 3, tailBytes: 560 }, limits, (k) => k === "busy"),
    ).toEqual([
      { key: "b", tail: true, writer: true },
      { key: "c", tail: true, writer: false },
    ]);
  });
});

describe("SessionRegistry: warm state within its limits", () => {
  let dir: string;
  let registry: SessionRegistry;
  const busy = new Set<string>();
  const header = makeHeader("s", "k", new Date(0));
  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), "clawdis-limits-"));
    registry = new SessionRegistry({
      clock: new ManualClock(0),
      passivateAfterMinutes: 60,
      busy: (key) => busy.has(key),
      save: async () => {},
      logger: createMemoryLogger().logger,
      limits: { openTranscripts: 2, tailBytes: 4000 },
    });
  });
  afterEach(async () => {
    registry.stop();
    await registry.settled();
    busy.clear();
    await rm(dir, { recursive: true, force: true });
  });

  /** A turn of `key`: touched, one append through its writer, its tail read, touched again at the end. */
  async function turn(key: string, text: string) {
    const session = registry.touch(key);
    const path = join(dir, `${key}.jsonl`);
    const writer = await registry.writerFor(session, path);
    await writer?.append(
      [{ type: "message", id: text, ts: header.createdAt, message: { role: "user", content: text } }],
      {
        header,
      },
    );
    await readResumeCached(session, path, 64 * 1024);
    registry.touch(key);
    return session;
  }

  it("the least recently used sessions close their transcripts first; a busy one keeps its own", async () => {
    const a = await turn("a", "one");
    busy.add("a");
    const b = await turn("b", "two");
    const c = await turn("c", "three");
    expect(registry.held().openTranscripts).toBe(2);
    expect(a.transcript?.isClosed).toBe(false); // busy: kept past the limit's order
    expect(b.transcript).toBeUndefined();
    expect(c.transcript?.isClosed).toBe(false);
    busy.delete("a");
    await turn("b", "four"); // b opens again; a, now the least recently used idle one, closes
    expect(a.transcript).toBeUndefined();
    expect(registry.held().openTranscripts).toBe(2);
  });

  it("a session with one turn holds no tail; its second turn keeps one", async () => {
    const a = await turn("a", "one");
    expect(a.tail).toBeUndefined();
    expect(registry.held().tailBytes).toBe(0);
    await turn("a", "two");
    expect(a.tail?.entries).toHaveLength(2);
    expect(registry.held().tailBytes).toBeGreaterThan(0);
  });

  it("tails over the byte limit are dropped, oldest first, and read from disk again next time", async () => {
    const sessions = [];
    for (let i = 0; i < 6; i++) {
      await turn(`s${i}`, "x".repeat(450));
      sessions.push(await turn(`s${i}`, "y".repeat(450)));
    }
    expect(registry.held().tailBytes).toBeLessThanOrEqual(4000);
    expect(sessions[0]!.tail).toBeUndefined();
    expect(sessions[5]!.tail).toBeDefined();
    const again = await readResumeCached(sessions[0]!, join(dir, "s0.jsonl"), 64 * 1024);
    expect(again.entries).toHaveLength(2);
    expect(again.bytesRead).toBeGreaterThan(0);
  });

  it("a stop closes every transcript once settled", async () => {
    const a = await turn("a", "one");
    const writer = a.transcript;
    registry.stop();
    await registry.settled();
    expect(writer?.isClosed).toBe(true);
    expect(await registry.writerFor(a, join(dir, "a.jsonl"))).toBeUndefined();
  });
});
