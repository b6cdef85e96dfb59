import { execFileSync } from "node:child_process";
import { realpathSync, statSync } from "node:fs";
import { appendFile, mkdtemp, readFile, rename, rm, stat, symlink, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { descriptorsOn } from "../../test/helpers/open-descriptors.js";
import { appendTranscript, makeHeader, readTranscript } from "./transcript.js";
import { TranscriptWriter } from "./transcript-writer.js";
import type { TranscriptEntry } from "./types.js";

const header = makeHeader("s1", "main", new Date(0));
const msg = (id: string): TranscriptEntry => ({
  type: "message",
  id,
  ts: "2026-01-01T00:00:00.000Z",
  message: { role: "user", content: `text of ${id}` },
});

let dir: string;
let path: string;
const writers: TranscriptWriter[] = [];
beforeEach(async () => {
  // Real path: /proc/self/fd shows each descriptor's file by it.
  dir = realpathSync(await mkdtemp(join(tmpdir(), "clawdis-writer-")));
  path = join(dir, "sessions", "s1.jsonl");
});
afterEach(async () => {
  for (const w of writers.splice(0)) await w.close();
  await rm(dir, { recursive: true, force: true });
});
async function open(): Promise<TranscriptWriter> {
  const writer = await TranscriptWriter.open(path);
  writers.push(writer);
  return writer;
}
const ids = async () => (await readTranscript(path)).entries.map((e) => e.id);

describe("TranscriptWriter", () => {
  it("creates the file (0600, folder 0700) with its header, then appends complete lines", async () => {
    const writer = await open();
    const first = await writer.append([msg("a")], { header });
    expect(first.prefix).toBe(`${JSON.stringify(header)}\n`);
    const second = await writer.append([msg("b"), msg("c")], { header, fsync: true });
    expect(second.prefix).toBe("");
    expect(second.before.size).toBe(first.after.size);
    const raw = await readFile(path, "utf8");
    expect(raw.split("\n")).toHaveLength(5);
    expect(second.after.size).toBe(Buffer.byteLength(raw));
    expect(await ids()).toEqual(["a", "b", "c"]);
    expect((await stat(path)).mode & 0o777).toBe(0o600);
    expect((await stat(join(dir, "sessions"))).mode & 0o777).toBe(0o700);
  });

  it("starts on a new line after a line cut short by someone else", async () => {
    const writer = await open();
    await writer.append([msg("a")], { header });
    await appendFile(path, '{"type":"message","id":"cut');
    const written = await writer.append([msg("b")], { header });
    expect(written.prefix).toBe("\n");
    const read = await readTranscript(path);
    expect(read.entries.map((e) => e.id)).toEqual(["a", "b"]);
    expect(read.badLines).toHaveLength(1);
  });

  it("keeps its lines and appendTranscript's whole when both append at once", async () => {
    const writer = await open();
    await Promise.all(
      Array.from({ length: 50 }, (_, i) =>
        i % 2 === 0
          ? writer.append([msg(`w${i}`)], { header })
          : appendTranscript(path, [msg(`p${i}`)], { header }),
      ),
    );
    const read = await readTranscript(path);
    expect(read.badLines).toEqual([]);
    expect(read.entries).toHaveLength(50);
  });

  it("a deleted transcript is created again, with its header, at the next append", async () => {
    const writer = await open();
    await writer.append([msg("a")], { header });
    await rm(path);
    expect(writer.current().linked).toBe(false);
    const written = await writer.append([msg("b")], { header });
    expect(written.prefix).toBe(`${JSON.stringify(header)}\n`);
    expect(await ids()).toEqual(["b"]);
    expect(writer.current().linked).toBe(true);
  });

  it("a transcript replaced by hand gets the next lines, not the file it replaced", async () => {
    const writer = await open();
    await writer.append([msg("a")], { header });
    await writeFile(`${path}.new`, `${JSON.stringify(header)}\n${JSON.stringify(msg("n"))}\n`);
    await rename(`${path}.new`, path);
    await writer.append([msg("b")], { header });
    expect(await ids()).toEqual(["n", "b"]);
  });

  it("refuses a transcript that is a symbolic link, and writes nothing through it", async () => {
    const target = join(dir, "elsewhere.jsonl");
    await writeFile(target, "");
    await appendTranscript(join(dir, "sessions", "x.jsonl"), [msg("x")], { header });
    await symlink(target, path);
    await expect(TranscriptWriter.open(path)).rejects.toThrow(/symbolic link/);
    expect(await readFile(target, "utf8")).toBe("");
  });

  it("appends queued before close still land; after it, appends fail", async () => {
    const writer = await open();
    const queued = writer.append([msg("a")], { header });
    const closed = writer.close();
    await queued;
    await closed;
    expect(writer.isClosed).toBe(true);
    await expect(writer.append([msg("b")], { header })).rejects.toThrow(/closed/);
    expect(await ids()).toEqual(["a"]);
  });

  it("holds one descriptor, closes it exactly once, and uses none after close", async () => {
    const writer = await open();
    expect(descriptorsOn(path)).toBe(1);
    await writer.append([msg("a")], { header });
    await rm(path);
    // The deleted file's descriptor is closed when the path is opened again.
    await writer.append([msg("b")], { header });
    expect(descriptorsOn(path)).toBe(1);
    await writer.close();
    expect(descriptorsOn(path)).toBe(0);
    await writer.close();
    await writer.sync();
    await expect(writer.append([msg("c")], { header })).rejects.toThrow(/closed/);
    await expect(writer.whileHeld(async () => "read")).rejects.toThrow(/closed/);
    expect(() => writer.current()).toThrow(/closed/);
    expect(await ids()).toEqual(["b"]);
  });

  it("a second close never closes a descriptor opened since", async () => {
    const first = await TranscriptWriter.open(path);
    await first.close();
    // The lowest free number is handed out again: most likely the one `first` held.
    const second = await open();
    await first.close();
    await second.append([msg("a")], { header });
    expect(descriptorsOn(path)).toBe(1);
    expect(await ids()).toEqual(["a"]);
  });

  it("an append that cannot open the path again fails clearly, keeps no descriptor, and the next one opens it", async () => {
    const writer = await open();
    await writer.append([msg("a")], { header });
    await rm(path);
    const target = join(dir, "elsewhere.jsonl");
    await writeFile(target, "");
    await symlink(target, path);
    await expect(writer.append([msg("b")], { header })).rejects.toThrow(/symbolic link/);
    expect(descriptorsOn(path)).toBe(0);
    expect(writer.current().linked).toBe(false);
    await rm(path);
    await writer.append([msg("c")], { header });
    expect(await ids()).toEqual(["c"]);
    expect(await readFile(target, "utf8")).toBe("");
    expect(descriptorsOn(path)).toBe(1);
  });

  it("openSync creates the file 0600 and each missing folder 0700 under a umask of 022, before it returns", () => {
    const previous = process.umask(0o022);
    try {
      const nested = join(dir, "a", "b", "s1.jsonl");
      writers.push(TranscriptWriter.openSync(nested));
      // Nothing awaited: the file and its folders are there as soon as openSync returns.
      expect(statSync(nested).mode & 0o777).toBe(0o600);
      expect(statSync(join(dir, "a")).mode & 0o777).toBe(0o700);
      expect(statSync(join(dir, "a", "b")).mode & 0o777).toBe(0o700);
    } finally {
      process.umask(previous);
    }
  });

  it("openSync refuses a link or a named pipe at once, and keeps no descriptor of it", async () => {
    await appendTranscript(join(dir, "sessions", "x.jsonl"), [msg("x")], { header });
    const pipe = join(dir, "sessions", "pipe.jsonl");
    execFileSync("mkfifo", [pipe]);
    expect(() => TranscriptWriter.openSync(pipe)).toThrow(/not a regular file/);
    expect(descriptorsOn(pipe)).toBe(0);
    await symlink(pipe, path);
    expect(() => TranscriptWriter.openSync(path)).toThrow(/symbolic link/);
  });
});
