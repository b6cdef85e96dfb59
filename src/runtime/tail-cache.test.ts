import { appendFile, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { appendTranscript, makeHeader, readTranscriptForResume } from "../sessions/transcript.js";
import { TranscriptWriter, type WrittenLines } from "../sessions/transcript-writer.js";
import type { TranscriptEntry } from "../sessions/types.js";
import {
  admitsTail,
  appendToTail,
  noteWritten,
  readResumeCached,
  type TailCache,
  type TailHolder,
  tailBytes,
  tailMatches,
} from "./tail-cache.js";

const header = makeHeader("s1", "main", new Date(0));
const TS = "2026-01-01T00:00:00.000Z";
const msg = (id: string, content: string, role: "user" | "assistant" = "user"): TranscriptEntry => ({
  type: "message",
  id,
  ts: TS,
  message: { role, content },
});
const call = (id: string): TranscriptEntry => ({
  type: "message",
  id,
  ts: TS,
  message: {
    role: "assistant",
    content: null,
    tool_calls: [{ id: `c-${id}`, type: "function", function: { name: "bash", arguments: "{}" } }],
  },
});
const result = (id: string, callId: string): TranscriptEntry => ({
  type: "message",
  id,
  ts: TS,
  message: { role: "tool", content: "output ".repeat(20), tool_call_id: `c-${callId}` },
});
const compaction = (id: string): TranscriptEntry =>
  ({ type: "compaction", id, ts: TS, notes: "n", kept: [] }) as TranscriptEntry;

describe("tailMatches (pure)", () => {
  const file = { dev: 1, ino: 2, size: 100, mtimeMs: 5 };
  const tail: TailCache = { path: "/t", file, floor: 50, entries: [], places: [], maxBytes: 1000 };
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

describe("appendToTail", () => {
  const file = { dev: 1, ino: 2, size: 100, mtimeMs: 5 };
  const a = msg("a", "x");
  // A new one for each use: appendToTail takes over the arrays of the tail it is given.
  const tailOf = (maxBytes = 1000): TailCache => ({
    path: "/t",
    file,
    floor: 100 - JSON.stringify(a).length - 1,
    entries: [a],
    places: [{ offset: 100 - JSON.stringify(a).length - 1, length: JSON.stringify(a).length }],
    maxBytes,
  });
  const line = JSON.stringify(msg("b", "y"));
  const grown = { ...file, size: 100 + Buffer.byteLength(line) + 1, mtimeMs: 6 };
  const written = (over: Partial<WrittenLines> = {}): WrittenLines => ({
    before: file,
    after: grown,
    prefix: "",
    lines: [line],
    ...over,
  });

  it("adds what was written when the file grew by exactly those bytes", () => {
    const next = appendToTail(tailOf(), written());
    expect(next?.entries.map((e) => e.id)).toEqual(["a", "b"]);
    expect(next?.places[1]).toEqual({ offset: 100, length: Buffer.byteLength(line) });
    expect(next?.file).toEqual(grown);
  });

  it("extends the given tail's arrays instead of copying them", () => {
    const tail = tailOf();
    const next = appendToTail(tail, written());
    expect(next?.entries).toBe(tail.entries);
    expect(next?.places).toBe(tail.places);
  });

  it("leaves the tail as it was when a later line does not parse", () => {
    const tail = tailOf();
    const after = { ...grown, size: grown.size + 10 };
    expect(appendToTail(tail, written({ after, lines: [line, "{not json"] }))).toBeUndefined();
    expect(tail.entries.map((e) => e.id)).toEqual(["a"]);
    expect(tail.places).toHaveLength(1);
  });

  it.each([
    ["someone else wrote too", { after: { ...grown, size: grown.size + 1 } }],
    ["the file was replaced", { after: { ...grown, ino: 3 } }],
    ["the file was not as the tail left it", { before: { ...file, mtimeMs: 4 } }],
    ["a header was written first", { prefix: `${JSON.stringify(header)}\n` }],
    ["a line cut short was ended first", { prefix: "\n" }],
    ["a line does not parse", { lines: ["{not json"] }],
  ])("is dropped when %s", (_name, over) => {
    const tail = tailOf();
    expect(appendToTail(tail, written(over))).toBeUndefined();
    expect(tail.entries.map((e) => e.id)).toEqual(["a"]);
  });

  it("past the read budget the oldest lines leave, the rest stays", () => {
    const next = appendToTail(tailOf(Buffer.byteLength(line) + 5), written());
    expect(next?.entries.map((e) => e.id)).toEqual(["b"]);
  });

  it("a line that starts exactly at the budget's edge stays, as a read keeps it", () => {
    const edge = grown.size - tailOf().places[0]!.offset;
    expect(appendToTail(tailOf(edge), written())?.entries.map((e) => e.id)).toEqual(["a", "b"]);
    expect(appendToTail(tailOf(edge - 1), written())?.entries.map((e) => e.id)).toEqual(["b"]);
  });

  it("a compaction entry starts the tail over, as a read does", () => {
    const c = JSON.stringify(compaction("c"));
    const after = { ...file, size: 100 + Buffer.byteLength(line) + Buffer.byteLength(c) + 2 };
    const next = appendToTail(tailOf(), written({ after, lines: [line, c] }));
    expect(next?.compaction?.entry.id).toBe("c");
    expect(next?.entries).toEqual([]);
    expect(next && tailBytes(next)).toBe(Buffer.byteLength(c) + 1);
  });
});

describe("admitsTail (pure)", () => {
  it.each([
    [0, false, false],
    [1, false, true],
    [5, false, true],
    [0, true, true],
  ])("after %i reads, keep %s -> %s", (resumes, keep, expected) => {
    expect(admitsTail(resumes, keep)).toBe(expected);
  });
});

describe("readResumeCached", () => {
  let dir: string;
  let path: string;
  let writer: TranscriptWriter;
  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), "clawdis-tail-"));
    path = join(dir, "s1.jsonl");
    writer = await TranscriptWriter.open(path);
    await writer.append([msg("a", "hello")], { header });
  });
  afterEach(async () => {
    await writer.close();
    await rm(dir, { recursive: true, force: true });
  });

  /** What a read from disk says, without the cost field. */
  async function fullRead(maxBytes = 64 * 1024) {
    const { bytesRead: _ignored, ...rest } = await readTranscriptForResume(path, { maxBytes });
    return rest;
  }
  /** A context read for `holder`; its first read from disk is kept as a tail (`keep`) unless told otherwise. */
  async function cached(holder: TailHolder, maxBytes = 64 * 1024, keep = true) {
    const { bytesRead, ...rest } = await readResumeCached(holder, path, maxBytes, { keep });
    return { bytesRead, rest };
  }
  async function append(holder: TailHolder, entries: TranscriptEntry[]) {
    noteWritten(holder, path, await writer.append(entries, { header }));
  }

  it("a session read once keeps no tail; from its second read on the tail is kept and answers", async () => {
    const holder: TailHolder = { transcript: writer };
    const first = await cached(holder, 64 * 1024, false);
    expect(first.bytesRead).toBeGreaterThan(0);
    expect(holder.tail).toBeUndefined();
    expect(first.rest).toEqual(await fullRead());
    await append(holder, [msg("b", "two")]);
    const second = await cached(holder, 64 * 1024, false);
    expect(second.bytesRead).toBeGreaterThan(0);
    expect(holder.tail).toBeDefined();
    await append(holder, [msg("c", "three")]);
    const third = await cached(holder, 64 * 1024, false);
    expect(third.bytesRead).toBe(0);
    expect(third.rest).toEqual(await fullRead());
    expect(holder.resumes).toBe(3);
  });

  it("a tail dropped at the limits is kept again at the next read (the session was used before)", async () => {
    const holder: TailHolder = { transcript: writer };
    await cached(holder, 64 * 1024, false);
    await cached(holder, 64 * 1024, false);
    delete holder.tail;
    await cached(holder, 64 * 1024, false);
    expect(holder.tail).toBeDefined();
  });

  it("after our own appends (a compaction among them) it answers from memory, equal to a read", async () => {
    const holder: TailHolder = { transcript: writer };
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

  it("past the read budget the cut slides with the appends, equal to a read at every step", async () => {
    const maxBytes = 1500;
    const holder: TailHolder = { transcript: writer };
    await cached(holder, maxBytes);
    let cuts = 0;
    let dropped = 0;
    for (let i = 0; i < 60; i++) {
      // Tool calls and their results around the moving cut: a result whose call was cut off is left out.
      const entries =
        i % 3 === 0 ? [call(`k${i}`), result(`r${i}`, `k${i}`)] : [msg(`m${i}`, "x".repeat(i * 7))];
      await append(holder, entries);
      const now = await cached(holder, maxBytes);
      expect(now.bytesRead).toBe(0);
      expect(now.rest).toEqual(await fullRead(maxBytes));
      if (now.rest.budgetCut) cuts++;
      dropped += now.rest.budgetCut?.toolResultsDropped ?? 0;
    }
    expect(cuts).toBeGreaterThan(40);
    expect(dropped).toBeGreaterThan(0);
    expect(holder.tail && tailBytes(holder.tail)).toBeLessThanOrEqual(maxBytes);
  });

  it("a hand edit (or another writer) is seen: the next read comes from disk", async () => {
    const holder: TailHolder = { transcript: writer };
    await cached(holder);
    await appendFile(path, `${JSON.stringify(msg("x", "by hand"))}\n`);
    const after = await cached(holder);
    expect(after.bytesRead).toBeGreaterThan(0);
    expect(after.rest.entries.map((e) => e.id)).toEqual(["a", "x"]);
  });

  it("a transcript replaced by hand is read again, and the writer appends to the new file", async () => {
    const holder: TailHolder = { transcript: writer };
    await cached(holder);
    await rm(path);
    await writeFile(path, `${JSON.stringify(header)}\n${JSON.stringify(msg("n", "new"))}\n`);
    const after = await cached(holder);
    expect(after.rest.entries.map((e) => e.id)).toEqual(["n"]);
    await append(holder, [msg("o", "next")]);
    expect((await fullRead()).entries.map((e) => e.id)).toEqual(["n", "o"]);
    expect((await cached(holder)).bytesRead).toBe(0);
  });

  it("a deleted transcript is created again (with its header) by the next append", async () => {
    const holder: TailHolder = { transcript: writer };
    await cached(holder);
    await rm(path);
    await append(holder, [msg("b", "after the reset")]);
    const raw = await readFile(path, "utf8");
    expect(raw.split("\n")[0]).toBe(JSON.stringify(header));
    expect((await cached(holder)).rest.entries.map((e) => e.id)).toEqual(["b"]);
  });

  it.each([
    ["a bad line", "not json\n"],
    ["a blank line", "\n"],
  ])("a transcript with %s is not kept: every read comes from disk", async (_name, junk) => {
    await appendFile(path, junk);
    const holder: TailHolder = {};
    const first = await cached(holder);
    expect(holder.tail).toBeUndefined();
    expect((await cached(holder)).rest).toEqual(first.rest);
  });

  it("appends through the path API are seen as someone else's", async () => {
    const holder: TailHolder = { transcript: writer };
    await cached(holder);
    await appendTranscript(path, [msg("p", "by path")], { header });
    const after = await cached(holder);
    expect(after.bytesRead).toBeGreaterThan(0);
    expect(after.rest.entries.map((e) => e.id)).toEqual(["a", "p"]);
  });
});
