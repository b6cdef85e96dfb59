import { execFileSync } from "node:child_process";
import { realpathSync } from "node:fs";
import { appendFile, mkdtemp, readdir, readFile, rm, stat, symlink, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { descriptorsOn } from "../../test/helpers/open-descriptors.js";
import {
  appendTranscript,
  makeHeader,
  newEntryId,
  readTranscript,
  readTranscriptForResume,
} from "./transcript.js";
import type { CompactionEntry, MessageEntry, TranscriptEntry } from "./types.js";

let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), "clawdis-transcript-"));
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

const header = makeHeader("s1", "main", new Date(Date.UTC(2026, 0, 1)));

function message(text: string, role: "user" | "assistant" = "user"): MessageEntry {
  return {
    type: "message",
    id: newEntryId(),
    ts: new Date().toISOString(),
    message: { role, content: text },
    meta: { channel: "test", chatId: "c1" },
  };
}

function compaction(notes: string): CompactionEntry {
  return { type: "compaction", id: newEntryId(), ts: new Date().toISOString(), notes, kept: [] };
}

const texts = (entries: TranscriptEntry[]) =>
  entries.map((e) => (e.type === "message" ? (e as MessageEntry).message.content : `<${e.type}>`));

describe("newEntryId / makeHeader", () => {
  it("makes unique ids that sort by creation order", () => {
    const ids = Array.from({ length: 2000 }, () => newEntryId());
    expect(new Set(ids).size).toBe(ids.length);
    expect([...ids].sort()).toEqual(ids);
    expect(ids[0]).toMatch(/^[0-9a-z]{18}$/);
  });

  it("makes the SPEC header", () => {
    expect(header).toEqual({
      type: "session",
      version: 1,
      id: "s1",
      sessionKey: "main",
      createdAt: "2026-01-01T00:00:00.000Z",
    });
  });
});

describe("appendTranscript / readTranscript", () => {
  it("round-trips the header and entries, header written once", async () => {
    const path = join(dir, "s1.jsonl");
    const a = message("hello");
    const b = message("hi there", "assistant");
    await appendTranscript(path, [a], { header });
    await appendTranscript(path, [b], { header, fsync: true });
    const raw = await readFile(path, "utf8");
    expect(raw.split("\n")).toHaveLength(4); // header, a, b, "" after the final newline
    expect(JSON.parse(raw.split("\n")[0]!)).toEqual(header);
    const read = await readTranscript(path);
    expect(read.exists).toBe(true);
    expect(read.header).toEqual(header);
    expect(read.entries).toEqual([a, b]);
    expect(read.badLines).toEqual([]);
  });

  it("creates the parent directory and writes the header into an empty file", async () => {
    const path = join(dir, "nested", "s1.jsonl");
    await appendTranscript(path, [message("x")], { header });
    const empty = join(dir, "empty.jsonl");
    await writeFile(empty, "");
    await appendTranscript(empty, [message("y")], { header });
    expect((await readTranscript(path)).header).toEqual(header);
    expect((await readTranscript(empty)).header).toEqual(header);
  });

  it("reports a missing file as not existing and empty", async () => {
    const read = await readTranscript(join(dir, "nope.jsonl"));
    expect(read).toEqual({ exists: false, entries: [], badLines: [] });
  });

  it("after a truncated last line, a new append starts on its own line", async () => {
    const path = join(dir, "s1.jsonl");
    await appendTranscript(path, [message("one"), message("two")], { header });
    const cut = JSON.stringify(message("three, cut by a crash")).slice(0, 25);
    await appendFile(path, cut);
    await appendTranscript(path, [message("four")], { header });
    const read = await readTranscript(path);
    expect(texts(read.entries)).toEqual(["one", "two", "four"]);
    expect(read.badLines).toHaveLength(1);
    expect(read.badLines[0]!.line).toBe(4);
    expect(read.badLines[0]!.reason).toMatch(/not JSON/);
    const raw = await readFile(path, "utf8");
    expect(raw.split("\n")[3]).toBe(cut);
  });

  it("skips garbage in the middle and keeps reading", async () => {
    const path = join(dir, "s1.jsonl");
    await appendTranscript(path, [message("one")], { header });
    await appendFile(path, 'garbage\n[1,2]\n{"type":1,"id":"x"}\n{"type":"message","id":"m"}\n');
    await appendTranscript(path, [message("two")], { header });
    const read = await readTranscript(path);
    expect(texts(read.entries)).toEqual(["one", "two"]);
    expect(read.badLines.map((b) => b.line)).toEqual([3, 4, 5, 6]);
    expect(read.badLines[1]!.reason).toBe("not a JSON object");
    expect(read.badLines[3]!.reason).toMatch(/message/);
  });

  it("reads on after a bad header, with header undefined", async () => {
    const path = join(dir, "s1.jsonl");
    const a = message("one");
    await writeFile(path, `{"type":"session","id":\n${JSON.stringify(a)}\n`);
    const read = await readTranscript(path);
    expect(read.header).toBeUndefined();
    expect(read.headerProblem).toMatch(/bad header/);
    expect(read.entries).toEqual([a]);
    expect(read.badLines).toEqual([{ line: 1, offset: 0, reason: expect.stringMatching(/bad header/) }]);
  });

  it("keeps line 1 as an entry when the header was lost", async () => {
    const path = join(dir, "s1.jsonl");
    const a = message("one");
    await writeFile(path, `${JSON.stringify(a)}\n`);
    const read = await readTranscript(path);
    expect(read.header).toBeUndefined();
    expect(read.headerProblem).toBeDefined();
    expect(read.entries).toEqual([a]);
    expect(read.badLines).toEqual([]);
  });

  it("returns entries of unknown type as they are", async () => {
    const path = join(dir, "s1.jsonl");
    const event = { type: "directive", id: newEntryId(), ts: "2026-01-01T00:00:00.000Z", thinking: "high" };
    await appendTranscript(path, [message("one"), event, message("two")], { header });
    const read = await readTranscript(path);
    expect(read.entries[1]).toEqual(event);
    expect(texts(read.entries)).toEqual(["one", "<directive>", "two"]);
  });

  it("keeps 100 concurrent appends whole and all present", async () => {
    const path = join(dir, "s1.jsonl");
    const big = "x".repeat(10_000);
    const entries = Array.from({ length: 100 }, (_, i) => message(`${i}:${big}`));
    await Promise.all(entries.map((e) => appendTranscript(path, [e], { header })));
    const raw = await readFile(path, "utf8");
    const lines = raw.split("\n");
    expect(lines).toHaveLength(102);
    expect(lines.filter((l) => l.includes('"type":"session"'))).toHaveLength(1);
    const read = await readTranscript(path);
    expect(read.badLines).toEqual([]);
    expect(read.entries).toEqual(entries);
  });

  it("a failed append does not block later appends to the same file", async () => {
    const path = join(dir, "s1.jsonl");
    const cyclic: Record<string, unknown> = { type: "event", id: "c", ts: "" };
    cyclic.self = cyclic;
    await expect(appendTranscript(path, [cyclic as TranscriptEntry], { header })).rejects.toThrow();
    await appendTranscript(path, [message("after")], { header });
    expect(texts((await readTranscript(path)).entries)).toEqual(["after"]);
  });
});

describe("readTranscriptForResume", () => {
  it("returns only the entries after the newest of two compactions", async () => {
    const path = join(dir, "s1.jsonl");
    await appendTranscript(path, [message("a"), message("b"), compaction("first notes"), message("c")], {
      header,
    });
    await appendTranscript(path, [compaction("second notes"), message("d"), message("e")], { header });
    const resume = await readTranscriptForResume(path);
    expect(resume.exists).toBe(true);
    expect(resume.header).toEqual(header);
    expect(resume.compaction?.notes).toBe("second notes");
    expect(texts(resume.entries)).toEqual(["d", "e"]);
    expect(resume.badLines).toEqual([]);
  });

  it("returns every entry when there is no compaction", async () => {
    const path = join(dir, "s1.jsonl");
    await appendTranscript(path, [message("a"), message("b"), message("c")], { header });
    const resume = await readTranscriptForResume(path);
    expect(resume.compaction).toBeUndefined();
    expect(resume.header).toEqual(header);
    expect(texts(resume.entries)).toEqual(["a", "b", "c"]);
    expect(resume.bytesRead).toBeGreaterThanOrEqual((await stat(path)).size);
  });

  it("reads only the tail of a large file, across chunk boundaries", async () => {
    const path = join(dir, "s1.jsonl");
    // ~2 MB before the compaction, lines of assorted lengths (some longer than the 64 KiB chunk).
    const before: TranscriptEntry[] = [];
    for (let i = 0; i < 400; i++) before.push(message(`old ${i} ${"é".repeat((i * 997) % 9000)}`));
    before.push(message(`long ${"z".repeat(150_000)}`));
    await appendTranscript(path, before, { header });
    const after = [message(`after ${"y".repeat(70_000)}`), message("ü last")];
    await appendTranscript(path, [compaction("notes"), ...after], { header });
    const size = (await stat(path)).size;
    const resume = await readTranscriptForResume(path);
    expect(resume.entries).toEqual(after);
    expect(resume.compaction?.notes).toBe("notes");
    expect(resume.bytesRead).toBeLessThan(300 * 1024);
    expect(size).toBeGreaterThan(2_000_000);
    // Without the compaction the whole file is read and every line comes back intact.
    const full = await readTranscript(path);
    expect(full.entries.slice(0, before.length)).toEqual(before);
  });

  it("handles a truncated last line and garbage in the tail", async () => {
    const path = join(dir, "s1.jsonl");
    await appendTranscript(path, [message("a"), compaction("n"), message("b")], { header });
    await appendFile(path, "not json\n");
    await appendTranscript(path, [message("c")], { header });
    await appendFile(path, '{"type":"message","id":"cut","me');
    const resume = await readTranscriptForResume(path);
    expect(texts(resume.entries)).toEqual(["b", "c"]);
    expect(resume.badLines).toHaveLength(2);
    expect(resume.badLines[0]!.offset).toBeLessThan(resume.badLines[1]!.offset);
    const raw = await readFile(path);
    expect(raw.subarray(resume.badLines[0]!.offset).toString().startsWith("not json")).toBe(true);
  });

  it("skips a compaction line that does not parse and uses the one before it", async () => {
    const path = join(dir, "s1.jsonl");
    await appendTranscript(path, [message("a"), compaction("good"), message("b")], { header });
    await appendFile(path, '{"type":"compaction","id":"x","notes":\n');
    await appendTranscript(path, [message("c")], { header });
    const resume = await readTranscriptForResume(path);
    expect(resume.compaction?.notes).toBe("good");
    expect(texts(resume.entries)).toEqual(["b", "c"]);
    expect(resume.badLines).toHaveLength(1);
  });

  it("reports a bad header and a missing file", async () => {
    const path = join(dir, "s1.jsonl");
    await writeFile(path, `garbage\n${JSON.stringify(message("a"))}\n`);
    const resume = await readTranscriptForResume(path);
    expect(resume.header).toBeUndefined();
    expect(resume.headerProblem).toMatch(/bad header/);
    expect(texts(resume.entries)).toEqual(["a"]);
    expect(resume.badLines).toEqual([{ offset: 0, reason: expect.stringMatching(/bad header/) }]);
    const missing = await readTranscriptForResume(join(dir, "nope.jsonl"));
    expect(missing).toEqual({ exists: false, entries: [], badLines: [], bytesRead: 0 });
  });

  it("keeps line 1 as an entry when the header was lost", async () => {
    const path = join(dir, "s1.jsonl");
    const a = message("a");
    await writeFile(path, `${JSON.stringify(a)}\n${JSON.stringify(message("b"))}`);
    const resume = await readTranscriptForResume(path);
    expect(texts(resume.entries)).toEqual(["a", "b"]);
    expect(resume.badLines).toEqual([]);
  });
});

describe("appendTranscript writes only to a plain file of its own", () => {
  it("refuses a transcript replaced by a symbolic link, and writes nothing through it", async () => {
    const outside = await mkdtemp(join(tmpdir(), "clawdis-outside-"));
    try {
      const target = join(outside, "victim.txt");
      await writeFile(target, "untouched\n");
      const path = join(dir, "s1.jsonl");
      await symlink(target, path);
      const append = appendTranscript(path, [message("into the link?")], { header });
      await expect(append).rejects.toMatchObject({ code: "IO" });
      await expect(append).rejects.toThrow(
        /refused to append to the transcript .*s1\.jsonl: it is a symbolic link/,
      );
      expect(await readFile(target, "utf8")).toBe("untouched\n");
      // A dangling link is refused too (O_CREAT alone would create the target).
      const dangling = join(dir, "s2.jsonl");
      await symlink(join(outside, "created-outside.jsonl"), dangling);
      await expect(appendTranscript(dangling, [message("x")], { header })).rejects.toThrow(/symbolic link/);
      expect(await readdir(outside)).toEqual(["victim.txt"]);
    } finally {
      await rm(outside, { recursive: true, force: true });
    }
  });

  it("refuses a transcript that is not a regular file (a named pipe)", async () => {
    const path = join(dir, "pipe.jsonl");
    execFileSync("mkfifo", [path]);
    await expect(appendTranscript(path, [message("x")], { header })).rejects.toThrow(/not a regular file/);
  });

  it("closes the descriptor of each append, synced or not, written or refused", async () => {
    const path = join(realpathSync(dir), "s1.jsonl");
    await appendTranscript(path, [message("a")], { header });
    await appendTranscript(path, [message("b")], { header, fsync: true });
    expect(descriptorsOn(path)).toBe(0);
    const pipe = join(realpathSync(dir), "pipe.jsonl");
    execFileSync("mkfifo", [pipe]);
    await expect(appendTranscript(pipe, [message("x")], { header })).rejects.toThrow(/not a regular file/);
    expect(descriptorsOn(pipe)).toBe(0);
    expect(texts((await readTranscript(path)).entries)).toEqual(["a", "b"]);
  });

  it("creates transcripts 0600 and their directory 0700 under a umask of 022", async () => {
    const previous = process.umask(0o022);
    try {
      const path = join(dir, "new-dir", "s1.jsonl");
      await appendTranscript(path, [message("private")], { header });
      expect((await stat(path)).mode & 0o777).toBe(0o600);
      expect((await stat(join(dir, "new-dir"))).mode & 0o777).toBe(0o700);
    } finally {
      process.umask(previous);
    }
  });
});
