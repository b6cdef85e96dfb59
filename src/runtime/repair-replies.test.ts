import { readlinkSync } from "node:fs";
import { type FileHandle, mkdtemp, open, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it, onTestFinished } from "vitest";
import { createMemoryLogger } from "../core/logger.js";
import { appendTranscript, makeHeader } from "../sessions/transcript.js";
import type { TranscriptEntry } from "../sessions/types.js";
import { repairReplies } from "./repair-replies.js";

function entry(id: string, content: string): TranscriptEntry {
  return {
    type: "message",
    id,
    ts: "2026-01-01T00:00:00.000Z",
    message: { role: "assistant", content },
  } as TranscriptEntry;
}

async function ids(path: string): Promise<string[]> {
  const text = await readFile(path, "utf8");
  return text
    .trim()
    .split("\n")
    .map((l) => (JSON.parse(l) as { id: string }).id);
}

/** repairReplies (repair-replies.ts): what a power cut took from a transcript is put back from the journal, once. */
describe("repairReplies", () => {
  let dir: string;
  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), "clawdis-repair-"));
  });
  afterEach(async () => {
    await rm(dir, { recursive: true, force: true });
  });
  const pathOf = (sessionId: string) => join(dir, `${sessionId}.jsonl`);

  it("appends, in order, the entries a transcript lacks and leaves those it holds", async () => {
    const header = makeHeader("s1", "main", new Date(0));
    await appendTranscript(pathOf("s1"), [entry("e1", "kept")], { header });
    const { logger, lines } = createMemoryLogger();
    await repairReplies(
      [
        {
          id: "r1",
          sessionId: "s1",
          sessionKey: "main",
          entries: [entry("e1", "kept"), entry("e2", "lost")],
        },
        {
          id: "r2",
          sessionId: "s1",
          sessionKey: "main",
          entries: [entry("e2", "lost"), entry("e3", "lost too")],
        },
      ],
      { transcriptPath: pathOf, logger, now: () => 0 },
    );
    expect(await ids(pathOf("s1"))).toEqual(["s1", "e1", "e2", "e3"]);
    expect(lines.filter((l) => l.level === "warn").map((l) => l.fields?.entries)).toEqual([2]);
  });

  it("a transcript that holds every entry is only synced; one that is gone is written again with its header", async () => {
    const header = makeHeader("s1", "main", new Date(0));
    await appendTranscript(pathOf("s1"), [entry("e1", "a"), entry("e2", "b")], { header });
    const before = await readFile(pathOf("s1"), "utf8");
    // After a kill -9 the lines are there but maybe not on disk: the file is fsync'd (FileHandle.sync, noted here).
    const probe = await open(pathOf("s1"), "r");
    const proto = Object.getPrototypeOf(probe) as FileHandle;
    await probe.close();
    const original = proto.sync;
    const synced: string[] = [];
    proto.sync = async function (this: FileHandle) {
      synced.push(readlinkSync(`/proc/self/fd/${this.fd}`));
      return original.call(this);
    };
    onTestFinished(() => {
      proto.sync = original;
    });
    const { logger, lines } = createMemoryLogger();
    await repairReplies(
      [
        { id: "r1", sessionId: "s1", sessionKey: "main", entries: [entry("e2", "b")] },
        { id: "r2", sessionId: "s2", sessionKey: "group:g", entries: [entry("f1", "c")] },
      ],
      { transcriptPath: pathOf, logger, now: () => 0 },
    );
    expect(await readFile(pathOf("s1"), "utf8")).toBe(before);
    expect(synced).toContain(pathOf("s1"));
    expect(await ids(pathOf("s2"))).toEqual(["s2", "f1"]);
    expect(JSON.parse((await readFile(pathOf("s2"), "utf8")).split("\n")[0]!)).toMatchObject({
      type: "session",
      sessionKey: "group:g",
    });
    expect(lines.filter((l) => l.level === "warn")).toHaveLength(1);
  });

  it("finds an entry further back than one read from the end, across a chunk's edge", async () => {
    // The entry's id lies across the 1 MiB boundary counted from the end of the file.
    const header = makeHeader("s1", "main", new Date(0));
    await appendTranscript(pathOf("s1"), [entry("far", "old")], { header });
    const head = await readFile(pathOf("s1"), "utf8");
    const at = head.indexOf('"far"') + 2;
    const filler = `${JSON.stringify({ type: "note", id: "pad", ts: "x", text: "" })}\n`;
    const padLength = 1024 * 1024 - (head.length - at) - 2 * filler.length;
    await writeFile(
      pathOf("s1"),
      head + filler.replace('"text":""', `"text":"${"y".repeat(padLength)}"`) + filler,
    );
    const { logger, lines } = createMemoryLogger();
    await repairReplies([{ id: "r1", sessionId: "s1", sessionKey: "main", entries: [entry("far", "old")] }], {
      transcriptPath: pathOf,
      logger,
      now: () => 0,
    });
    expect((await ids(pathOf("s1"))).filter((id) => id === "far")).toHaveLength(1);
    expect(lines.filter((l) => l.level === "warn")).toEqual([]);
  });
});
