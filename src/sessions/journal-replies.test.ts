import { type FileHandle, mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { createMemoryLogger } from "../core/logger.js";
import { Journal, MAX_RECORD_BYTES, type UnsyncedReply } from "./journal.js";
import type { TranscriptEntry } from "./types.js";

function entry(id: string, content = "hi"): TranscriptEntry {
  return {
    type: "message",
    id,
    ts: "2026-01-01T00:00:00.000Z",
    message: { role: "assistant", content },
  } as TranscriptEntry;
}

async function lines(dir: string): Promise<{ op: string }[]> {
  const text = await readFile(join(dir, "inbound.jsonl"), "utf8");
  return text
    .trim()
    .split("\n")
    .map((l) => JSON.parse(l) as { op: string });
}

/**
 * The journal's `reply` records (journal.ts contract): a reply is durable in the journal before it is sent; what a
 * `synced` mark does not cover is handed to `repair` at open, before the file is compacted; nothing drops the
 * records before the transcripts are synced.
 */
describe("Journal: reply records", () => {
  let dir: string;
  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), "clawdis-journal-replies-"));
  });
  afterEach(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  /** A journal whose `syncTranscripts` is counted (and fails while `failing`). */
  function journalWith(options: { compactEvery?: number } = {}) {
    const { logger, lines: logs } = createMemoryLogger();
    const state = { syncs: 0, failing: false };
    const journal = new Journal({
      dir,
      logger,
      ...options,
      syncTranscripts: async () => {
        state.syncs += 1;
        if (state.failing) throw new Error("EIO: i/o error, fsync");
      },
    });
    return { journal, state, logs };
  }

  it("a crash leaves every reply after the last mark to repair at the next open, before compaction", async () => {
    const first = journalWith().journal;
    await first.openJournal();
    expect(await first.reply("s1", "main", [entry("a1"), entry("a2")], 1)).toBe(true);
    const covered = first.lastReplyWritten()!;
    await first.reply("s2", "group:x", [entry("b1")], 2);
    await first.markSynced(covered, 3);
    await first.reply("s1", "main", [entry("a3")], 4);
    await crash(first);

    const seen: UnsyncedReply[][] = [];
    const second = journalWith().journal;
    await second.openJournal({
      repair: async (replies) => {
        // Called before the compaction: the records are still in the file.
        expect((await lines(dir)).filter((l) => l.op === "reply")).toHaveLength(3);
        seen.push(replies);
      },
    });
    expect(seen).toHaveLength(1);
    expect(seen[0]!.map((r) => [r.sessionId, r.sessionKey, r.entries.map((e) => e.id)])).toEqual([
      ["s2", "group:x", ["b1"]],
      ["s1", "main", ["a3"]],
    ]);
    // Compacted once repaired: the reply records are gone.
    expect((await lines(dir)).map((l) => l.op)).toEqual(["seen"]);
    await second.close();
  });

  it("a close syncs the transcripts and marks every reply: the next open has nothing to repair", async () => {
    const { journal, state } = journalWith();
    await journal.openJournal();
    await journal.reply("s1", "main", [entry("a1")], 1);
    await journal.reply("s2", "main", [entry("b1")], 2);
    await journal.close();
    expect(state.syncs).toBe(1);
    expect((await lines(dir)).map((l) => l.op)).toEqual(["seen", "reply", "reply", "synced"]);

    const again = journalWith().journal;
    const given: UnsyncedReply[][] = [];
    await again.openJournal({ repair: async (replies) => void given.push(replies) });
    expect(given).toEqual([]);
    await again.close();
  });

  it("a repair that fails keeps the records: no compaction and no mark until a repair succeeds", async () => {
    const first = journalWith().journal;
    await first.openJournal();
    await first.reply("s1", "main", [entry("a1")], 1);
    await crash(first);

    const { journal: second, logs } = journalWith({ compactEvery: 3 });
    let failing = true;
    let repairs = 0;
    await second.openJournal({
      repair: async () => {
        repairs += 1;
        if (failing) throw new Error("EACCES: permission denied, open 's1.jsonl'");
      },
    });
    expect(logs.some((l) => l.level === "error" && l.message.includes("not compacted"))).toBe(true);
    expect((await lines(dir)).filter((l) => l.op === "reply")).toHaveLength(1);
    // This process claims nothing about the old reply while it is not repaired.
    await second.reply("s1", "main", [entry("a2")], 2);
    await second.markSynced(second.lastReplyWritten()!, 3);
    expect((await lines(dir)).some((l) => l.op === "synced")).toBe(false);
    // A compaction is due (3 records): it tries the repair again first; while it fails, the file is kept.
    await second.end(await second.accept(messageFor("m1"), 4), "replied", 5);
    await second.settled();
    expect(repairs).toBe(2);
    expect((await lines(dir)).filter((l) => l.op === "reply")).toHaveLength(2);
    failing = false;
    await second.end(await second.accept(messageFor("m2"), 6), "replied", 7);
    await second.settled();
    expect(repairs).toBe(3);
    expect((await lines(dir)).filter((l) => l.op === "reply")).toHaveLength(0);
    await second.close();
  });

  it("a compaction syncs the transcripts before it drops reply records; if that fails, it does not compact", async () => {
    const { journal, state } = journalWith({ compactEvery: 2 });
    await journal.openJournal();
    state.failing = true;
    await journal.reply("s1", "main", [entry("a1")], 1);
    await journal.reply("s1", "main", [entry("a2")], 2);
    await journal.settled();
    // Due after two records: the sync failed, so both records are still in the file.
    expect(state.syncs).toBe(1);
    expect((await lines(dir)).filter((l) => l.op === "reply")).toHaveLength(2);
    state.failing = false;
    await journal.reply("s1", "main", [entry("a3")], 3);
    await journal.settled();
    expect(state.syncs).toBe(2);
    expect((await lines(dir)).map((l) => l.op)).toEqual(["seen"]);
    await journal.close();
  });

  it("a reply too large for one record is refused, with nothing written: the caller syncs the transcript", async () => {
    const { journal } = journalWith();
    await journal.openJournal();
    const big = entry("big", "x".repeat(MAX_RECORD_BYTES));
    expect(await journal.reply("s1", "main", [big], 1)).toBe(false);
    expect(journal.lastReplyWritten()).toBeUndefined();
    expect((await lines(dir)).map((l) => l.op)).toEqual(["seen"]);
    await journal.close();
  });

  it("a reply record's ends end those records once it is on disk, and still after a restart", async () => {
    const { journal } = journalWith();
    await journal.openJournal();
    const jid = await journal.accept(messageFor("m1"), 1);
    const joined = await journal.accept(messageFor("m2"), 2);
    const other = await journal.accept(messageFor("m3"), 3);
    await journal.reply("s1", "main", [entry("a1")], 4, [
      { jid },
      { jid: joined, reason: `answered with ${jid}` },
    ]);
    expect(journal.get(jid)).toBeUndefined();
    expect(journal.get(joined)).toBeUndefined();
    expect(journal.openCount()).toBe(1);
    await crash(journal);
    const again = journalWith().journal;
    const open = await again.openJournal({ repair: async () => {} });
    expect(open.map((r) => r.jid)).toEqual([other]);
    await again.close();
  });

  it("settled waits for records queued without waiting (an end nobody awaits)", async () => {
    const { journal } = journalWith();
    await journal.openJournal();
    const jid = await journal.accept(messageFor("m1"), 1);
    void journal.end(jid, "replied", 2);
    await journal.settled();
    expect(journal.openCount()).toBe(0);
    expect((await lines(dir)).map((l) => l.op)).toEqual(["seen", "accept", "end"]);
    await journal.close();
  });
});

/** As a kill -9 would leave it: the descriptor closed, nothing more written (no close, so no `synced`). */
async function crash(journal: Journal): Promise<void> {
  await journal.settled();
  // The writer's descriptor (journal-writer.ts); checked, so that a rename cannot turn this into leaving it open.
  const handle = (journal as unknown as { writer: { handle?: FileHandle } }).writer.handle;
  expect(handle, "the journal's open file").toBeDefined();
  await handle?.close();
}

function messageFor(id: string) {
  return {
    channel: "test",
    chatId: "c1",
    chatType: "direct" as const,
    senderId: "s1",
    messageId: id,
    text: "hi",
    receivedAt: 1,
  };
}
