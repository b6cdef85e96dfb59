import { appendFile, mkdtemp, readFile, rename, rm, stat, symlink, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
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
  dir = await mkdtemp(join(tmpdir(), "clawdis-writer-"));
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
});
