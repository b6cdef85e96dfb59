import { readlinkSync } from "node:fs";
import { type FileHandle, mkdtemp, open, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { createMemoryLogger } from "../core/logger.js";
import { TranscriptWriter } from "../sessions/transcript-writer.js";
import { HOT_MS, TranscriptSync } from "./transcript-sync.js";

/**
 * TranscriptSync's contract (transcript-sync.ts): every noted path is fsync'd by a pass, a pass marks the reply
 * record that was newest when it began, and a path whose fsync fails stays noted. The fsyncs are the kernel's;
 * this test only notes which files they were for (FileHandle.sync, which syncFile uses).
 */
describe("TranscriptSync", () => {
  let dir: string;
  let restore: (() => void) | undefined;
  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), "clawdis-tsync-"));
  });
  afterEach(async () => {
    restore?.();
    restore = undefined;
    await rm(dir, { recursive: true, force: true });
  });

  /** Notes the path of every FileHandle.sync; `failFor` makes the sync of that path fail; `during` runs inside. */
  async function interceptSync() {
    const probe = await open(join(dir, "probe"), "w");
    const proto = Object.getPrototypeOf(probe) as FileHandle;
    await probe.close();
    const original = proto.sync;
    const state: { synced: string[]; failFor?: string; during?: () => void } = { synced: [] };
    proto.sync = async function (this: FileHandle) {
      const path = readlinkSync(`/proc/self/fd/${this.fd}`);
      state.during?.();
      if (path === state.failFor) throw Object.assign(new Error("EIO: i/o error, fsync"), { code: "EIO" });
      state.synced.push(path);
      return original.call(this);
    };
    restore = () => {
      proto.sync = original;
    };
    return state;
  }

  function fakeJournal(last: string | undefined) {
    const marks: string[] = [];
    let marked: () => void = () => {};
    const journal = {
      last,
      lastReplyWritten: () => journal.last,
      markSynced: async (upTo: string) => {
        marks.push(upTo);
        marked();
      },
      /** Resolves at the next mark. */
      nextMark: () => new Promise<void>((resolve) => (marked = resolve)),
    };
    return { journal, marks };
  }

  it("a pass fsyncs every noted transcript, then marks the reply record that was newest when it began", async () => {
    const a = join(dir, "a.jsonl");
    const b = join(dir, "b.jsonl");
    await writeFile(a, "{}\n");
    await writeFile(b, "{}\n");
    const sync = await interceptSync();
    const { journal, marks } = fakeJournal("r1");
    // A reply written while the pass syncs is not covered by its mark.
    sync.during = () => {
      journal.last = "r2";
    };
    const { logger } = createMemoryLogger();
    const syncer = new TranscriptSync({ journal, logger, now: () => 0, everyMs: 0 });
    const marked = journal.nextMark();
    syncer.noteWritten(a);
    syncer.noteWritten(b);
    syncer.noteWritten(a);
    await marked;
    expect(sync.synced.sort()).toEqual([a, b]);
    expect(marks).toEqual(["r1"]);
    expect(syncer.pendingCount()).toBe(0);
    syncer.stop();
  });

  it("a transcript whose fsync fails stays noted and nothing is marked; the next pass syncs it", async () => {
    const a = join(dir, "a.jsonl");
    await writeFile(a, "{}\n");
    const sync = await interceptSync();
    sync.failFor = a;
    const { journal, marks } = fakeJournal("r1");
    const { logger, lines } = createMemoryLogger();
    const syncer = new TranscriptSync({ journal, logger, now: () => 0, everyMs: 60_000 });
    syncer.noteWritten(a);
    await syncer.pass();
    expect(marks).toEqual([]);
    expect(syncer.pendingCount()).toBe(1);
    expect(lines.some((l) => l.level === "warn" && l.message.includes("could not sync transcripts"))).toBe(
      true,
    );
    await expect(syncer.syncAll()).rejects.toThrow(/EIO/);
    sync.failFor = undefined;
    await syncer.pass();
    expect(sync.synced).toEqual([a]);
    expect(marks).toEqual(["r1"]);
    syncer.stop();
  });

  it("a transcript synced less than HOT_MS ago, or noted for a pass, is hot: its next reply goes to the journal", async () => {
    const a = join(dir, "a.jsonl");
    await writeFile(a, "{}\n");
    const { journal } = fakeJournal("r1");
    const { logger } = createMemoryLogger();
    let now = 10_000;
    const syncer = new TranscriptSync({ journal, logger, now: () => now, everyMs: 60_000 });
    expect(syncer.viaJournal(a)).toBe(false);
    syncer.noteSynced(a);
    now += HOT_MS - 1;
    expect(syncer.viaJournal(a)).toBe(true);
    now += 1;
    expect(syncer.viaJournal(a)).toBe(false);
    syncer.noteWritten(a);
    expect(syncer.viaJournal(a)).toBe(true);
    // A pass syncs it: hot for HOT_MS from then.
    now += 5 * HOT_MS;
    await syncer.pass();
    now += HOT_MS - 1;
    expect(syncer.viaJournal(a)).toBe(true);
    syncer.stop();
  });

  it("a transcript deleted since it was written has nothing to sync; with no reply record nothing is marked", async () => {
    const sync = await interceptSync();
    const { journal, marks } = fakeJournal(undefined);
    const { logger } = createMemoryLogger();
    const syncer = new TranscriptSync({ journal, logger, now: () => 0, everyMs: 60_000 });
    syncer.noteWritten(join(dir, "gone.jsonl"));
    await syncer.pass();
    expect(sync.synced).toEqual([]);
    expect(syncer.pendingCount()).toBe(0);
    expect(marks).toEqual([]);
    syncer.stop();
  });

  it("a path noted with the writer that wrote it is synced through that writer's descriptor while it holds the file", async () => {
    const a = join(dir, "a.jsonl");
    const b = join(dir, "b.jsonl");
    const c = join(dir, "c.jsonl");
    const sync = await interceptSync();
    const { journal } = fakeJournal("r1");
    const { logger } = createMemoryLogger();
    const syncer = new TranscriptSync({ journal, logger, now: () => 0, everyMs: 60_000 });
    const opened = [a, b, c].map((path) => TranscriptWriter.openSync(path));
    const [held, closed, replaced] = opened as [TranscriptWriter, TranscriptWriter, TranscriptWriter];
    const throughDescriptor: string[] = [];
    for (const writer of opened) {
      const original = writer.syncHeld.bind(writer);
      writer.syncHeld = async () => {
        const done = await original();
        if (done) throughDescriptor.push(writer.path);
        return done;
      };
    }
    syncer.noteWritten(a, held);
    // A writer closed before the pass holds nothing: its path is synced by name.
    syncer.noteWritten(b, closed);
    await closed.close();
    // The newest note of a path says how: written since without a writer, it is synced by name.
    syncer.noteWritten(c, replaced);
    await writeFile(c, "{}\n");
    syncer.noteWritten(c);
    await syncer.pass();
    expect(throughDescriptor).toEqual([a]);
    expect(sync.synced.sort()).toEqual([b, c]);
    expect(syncer.pendingCount()).toBe(0);
    await held.close();
    await replaced.close();
    syncer.stop();
  });
});
