import { appendFile, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { appendTranscript, makeHeader, readTranscriptForResume } from "../sessions/transcript.js";
import type { TranscriptEntry } from "../sessions/types.js";
import {
  appendToTail,
  noteAppended,
  readResumeCached,
  type TailCache,
  type TailHolder,
  tailMatches,
} from "./tail-cache.js";

const header = makeHeader("s1", "main", new Date(0));
const msg = (id: string, content: string): TranscriptEntry => ({
  type: "message",
  id,
  ts: "2026-01-01T00:00:00.000Z",
  message: { role: "user", content },
});
const compaction = (id: string): TranscriptEntry =>
  ({ type: "compaction", id, ts: "2026-01-01T00:00:00.000Z", notes: "n", kept: [] }) as TranscriptEntry;

describe("tailMatches (pure)", () => {
  const file = { dev: 1, ino: 2, size: 100, mtimeMs: 5 };
  const tail: TailCache = { path: "/t", file, entries: [], bytes: 100, maxBytes: 1000 };
  it.each([
    ["the same file", "/t", file, true],
    ["another path", "/u", file, false],
    ["another size (same time)", "/t", { ...file, size: 101 }, false],
    ["another time (same size)", "/t", { ...file, mtimeMs: 6 }, false],
    ["another inode", "/t", { ...file, ino: 3 }, false],
    ["another device", "/t", { ...file, dev: 2 }, false],
  ])("%s -> %s", (_name, path, other, expected) => {
    expect(tailMatches(tail, path, other)).toBe(expected);
  });
  it("no tail never matches", () => {
    expect(tailMatches(undefined, "/t", file)).toBe(false);
  });
});

describe("appendToTail (pure)", () => {
  const file = { dev: 1, ino: 2, size: 100, mtimeMs: 5 };
  const tail: TailCache = { path: "/t", file, entries: [msg("a", "x")], bytes: 100, maxBytes: 1000 };
  const line = JSON.stringify(msg("b", "y"));
  const grown = { ...file, size: 100 + Buffer.byteLength(line) + 1, mtimeMs: 6 };

  it("adds what was appended when the file grew by exactly those bytes", () => {
    const next = appendToTail(tail, [line], grown);
    expect(next?.entries.map((e) => e.id)).toEqual(["a", "b"]);
    expect(next?.file).toEqual(grown);
    expect(tail.entries.map((e) => e.id)).toEqual(["a"]);
  });

  it.each([
    ["someone else wrote too", { ...grown, size: grown.size + 1 }],
    ["the file was replaced", { ...grown, ino: 3 }],
    ["another device", { ...grown, dev: 9 }],
  ])("is dropped when %s", (_name, after) => {
    expect(appendToTail(tail, [line], after)).toBeUndefined();
  });

  it("is dropped when it outgrows the read budget", () => {
    expect(appendToTail({ ...tail, maxBytes: 110 }, [line], grown)).toBeUndefined();
  });

  it("a compaction entry starts the tail over, as a read does", () => {
    const c = JSON.stringify(compaction("c"));
    const after = { ...file, size: 100 + Buffer.byteLength(line) + Buffer.byteLength(c) + 2 };
    const next = appendToTail(tail, [line, c], after);
    expect(next?.compaction?.id).toBe("c");
    expect(next?.entries).toEqual([]);
  });
});

describe("readResumeCached", () => {
  let dir: string;
  let path: string;
  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), "clawdis-tail-"));
    path = join(dir, "s1.jsonl");
    await appendTranscript(path, [msg("a", "hello")], { header });
  });
  afterEach(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  /** What a full read says, without the cost fields. */
  async function fullRead() {
    const { bytesRead: _ignored, ...rest } = await readTranscriptForResume(path, { maxBytes: 64 * 1024 });
    return rest;
  }
  async function cached(holder: TailHolder) {
    const { bytesRead, ...rest } = await readResumeCached(holder, path, 64 * 1024);
    return { bytesRead, rest };
  }
  async function append(holder: TailHolder, entries: TranscriptEntry[]) {
    await appendTranscript(path, entries, { header });
    await noteAppended(holder, path, entries);
  }

  it("after our own appends (a compaction among them) it answers from memory, equal to a full read", async () => {
    const holder: TailHolder = {};
    expect((await cached(holder)).bytesRead).toBeGreaterThan(0);
    await append(holder, [msg("b", "two")]);
    let second = await cached(holder);
    expect(second.bytesRead).toBe(0);
    expect(second.rest).toEqual(await fullRead());
    await append(holder, [compaction("c"), msg("d", "after")]);
    second = await cached(holder);
    expect(second.bytesRead).toBe(0);
    expect(second.rest).toEqual(await fullRead());
    expect(second.rest.entries.map((e) => e.id)).toEqual(["d"]);
  });

  it("a hand edit (or another writer) is seen: the next read comes from disk", async () => {
    const holder: TailHolder = {};
    await cached(holder);
    await appendFile(path, `${JSON.stringify(msg("x", "by hand"))}\n`);
    const after = await cached(holder);
    expect(after.bytesRead).toBeGreaterThan(0);
    expect(after.rest.entries.map((e) => e.id)).toEqual(["a", "x"]);
  });

  it("a transcript replaced by hand is read again", async () => {
    const holder: TailHolder = {};
    await cached(holder);
    await rm(path);
    await writeFile(path, `${JSON.stringify(header)}\n${JSON.stringify(msg("n", "new"))}\n`);
    const after = await cached(holder);
    expect(after.rest.entries.map((e) => e.id)).toEqual(["n"]);
  });

  it("a transcript with a bad line is not kept: every read reports it again", async () => {
    await appendFile(path, "not json\n");
    const holder: TailHolder = {};
    await cached(holder);
    expect(holder.tail).toBeUndefined();
    expect((await cached(holder)).rest.badLines).toHaveLength(1);
  });
});
