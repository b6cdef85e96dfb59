import { mkdir, mkdtemp, open, readFile, rename, rm, stat, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { journalMessage as message } from "../../test/helpers/journal-message.js";
import { createMemoryLogger } from "../core/logger.js";
import { Journal, MAX_RECORD_BYTES } from "./journal.js";

describe("Journal", () => {
  let dir: string;
  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), "clawdis-journal-"));
  });
  afterEach(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it("returns records left open by the previous run, with their stage", async () => {
    const { logger } = createMemoryLogger();
    const first = new Journal({ dir, logger });
    expect(await first.openJournal()).toEqual([]);
    const done = await first.accept(message("m1"), 10);
    const open = await first.accept(message("m2", "second"), 11);
    const replied = await first.accept(message("m3"), 12);
    await first.end(done, "replied", 20);
    await first.markDelivered(replied, 0, 23);
    await first.close();

    const second = new Journal({ dir, logger });
    const records = await second.openJournal();
    expect(records.map((r) => r.message.messageId)).toEqual(["m2", "m3"]);
    expect(records[0]).toMatchObject({ jid: open, delivered: [], message: { text: "second" } });
    expect(records[1]).toMatchObject({ jid: replied, delivered: [0] });
    await second.close();
  });

  it("group-commits records queued together, and each resolves once on disk", async () => {
    const { logger } = createMemoryLogger();
    const journal = new Journal({ dir, logger });
    await journal.openJournal();
    const jids = await Promise.all(Array.from({ length: 50 }, (_, i) => journal.accept(message(`g${i}`), i)));
    await Promise.all(jids.map((jid) => journal.end(jid, "replied", 99)));
    await journal.close();
    const again = new Journal({ dir, logger });
    expect(await again.openJournal()).toEqual([]);
    expect(again.isDuplicate(message("g49"))).toBe(true);
    await again.close();
  });

  it("remembers message ids across restarts for dedupe, bounded", async () => {
    const { logger } = createMemoryLogger();
    const first = new Journal({ dir, logger, dedupeLimit: 2 });
    await first.openJournal();
    for (const id of ["a", "b", "c"]) await first.end(await first.accept(message(id), 1), "replied", 2);
    expect(first.isDuplicate(message("c"))).toBe(true);
    expect(first.isDuplicate({ channel: "other", messageId: "c" })).toBe(false);
    await first.close();
    const second = new Journal({ dir, logger, dedupeLimit: 2 });
    await second.openJournal();
    expect(second.isDuplicate(message("b"))).toBe(true);
    expect(second.isDuplicate(message("c"))).toBe(true);
    expect(second.isDuplicate(message("a"))).toBe(false);
    await second.close();
  });

  it("compacts finished records away but keeps open ones", async () => {
    const { logger } = createMemoryLogger();
    const journal = new Journal({ dir, logger, compactEvery: 10 });
    await journal.openJournal();
    for (let i = 0; i < 20; i++)
      await journal.end(await journal.accept(message(`m${i}`), i), "filtered", i, "test");
    const keep = await journal.accept(message("keep"), 100);
    await journal.close();
    const lines = (await readFile(join(dir, "inbound.jsonl"), "utf8")).trim().split("\n");
    expect(lines.length).toBeLessThan(20);
    const again = new Journal({ dir, logger });
    const open = await again.openJournal();
    expect(open.map((r) => r.jid)).toEqual([keep]);
    expect(again.isDuplicate(message("m3"))).toBe(true);
    await again.close();
  });

  it("skips a torn last line and says so", async () => {
    const { logger, lines } = createMemoryLogger();
    const first = new Journal({ dir, logger });
    await first.openJournal();
    const jid = await first.accept(message("m1"), 1);
    await first.close();
    await writeFile(
      join(dir, "inbound.jsonl"),
      `${await readFile(join(dir, "inbound.jsonl"), "utf8")}{"op":"end","ji`,
    );
    const second = new Journal({ dir, logger });
    expect((await second.openJournal()).map((r) => r.jid)).toEqual([jid]);
    expect(lines.some((l) => l.level === "warn" && l.message.includes("do not parse"))).toBe(true);
    await second.close();
  });

  it("a write that fails leaves no trace: the message is not seen, and its retry is accepted", async () => {
    const { logger } = createMemoryLogger();
    const journal = new Journal({ dir, logger });
    await journal.openJournal();
    const path = join(dir, "inbound.jsonl");
    // The journal's place is taken by a non-empty directory: every write fails (like a full disk would).
    await rm(path);
    await mkdir(join(path, "x"), { recursive: true });
    await expect(journal.accept(message("retry-me"), 1)).rejects.toThrow();
    expect(journal.isDuplicate(message("retry-me"))).toBe(false);
    expect(journal.openCount()).toBe(0);
    await rm(path, { recursive: true });
    const jid = await journal.accept(message("retry-me"), 2);
    expect(journal.isDuplicate(message("retry-me"))).toBe(true);
    await journal.close();
    const again = new Journal({ dir, logger });
    expect((await again.openJournal()).map((r) => r.jid)).toEqual([jid]);
    await again.close();
  });

  it("a message being written is already a duplicate (two hand-ins of one id cannot both be accepted)", async () => {
    const { logger } = createMemoryLogger();
    const journal = new Journal({ dir, logger });
    await journal.openJournal();
    const writing = journal.accept(message("twice"), 1);
    expect(journal.isDuplicate(message("twice"))).toBe(true);
    await writing;
    await journal.close();
  });

  it("acceptWritten resolves once the record is in the file, before its fsync; it counts once durable", async () => {
    const { logger } = createMemoryLogger();
    const journal = new Journal({ dir, logger });
    await journal.openJournal();
    const { jid, durable } = await journal.acceptWritten(message("early"), 1);
    // In the file already (a crash of the process keeps it), a duplicate of itself, not yet counted as open.
    expect(await readFile(journal.filePath, "utf8")).toContain(jid);
    expect(journal.isDuplicate(message("early"))).toBe(true);
    await durable;
    expect(journal.isDuplicate(message("early"))).toBe(true);
    await journal.close();
    const again = new Journal({ dir, logger });
    expect((await again.openJournal()).map((r) => r.jid)).toEqual([jid]);
    await again.close();
  });

  it("a journal whose file was replaced by someone else writes its state afresh: nothing accepted is lost", async () => {
    const { logger, lines } = createMemoryLogger();
    const journal = new Journal({ dir, logger });
    await journal.openJournal();
    const before = await journal.accept(message("before"), 1);
    const path = join(dir, "inbound.jsonl");
    await writeFile(join(dir, "other"), `${JSON.stringify({ op: "seen", keys: [] })}\n`);
    await rename(join(dir, "other"), path);
    const after = await journal.accept(message("after"), 2);
    await journal.close();
    expect(lines.some((l) => l.level === "error" && l.message.includes("replaced or removed"))).toBe(true);
    const again = new Journal({ dir, logger });
    expect((await again.openJournal()).map((r) => r.jid).sort()).toEqual([before, after].sort());
    await again.close();
  });

  it("compacts by size as well as by count", async () => {
    const { logger } = createMemoryLogger();
    const journal = new Journal({ dir, logger, compactBytes: 64 * 1024 });
    await journal.openJournal();
    const big = "y".repeat(10 * 1024);
    for (let i = 0; i < 20; i++)
      await journal.end(await journal.accept(message(`b${i}`, big), i), "replied", i);
    await journal.close();
    // 20 records of 10 KiB were written (>200 KiB); compaction keeps the file under the limit plus one batch.
    expect((await stat(join(dir, "inbound.jsonl"))).size).toBeLessThan(64 * 1024 + 11 * 1024);
  });

  it("keeps working when a compaction fails, and compacts later", async () => {
    const { logger, lines } = createMemoryLogger();
    const journal = new Journal({ dir, logger, compactEvery: 3 });
    await journal.openJournal();
    const tmp = join(dir, `inbound.jsonl.tmp-${process.pid}`);
    await mkdir(join(tmp, "x"), { recursive: true });
    const jids: string[] = [];
    for (let i = 0; i < 5; i++) jids.push(await journal.accept(message(`c${i}`), i));
    expect(lines.some((l) => l.message === "journal compaction failed")).toBe(true);
    await rm(tmp, { recursive: true });
    jids.push(await journal.accept(message("c5"), 5));
    await journal.close();
    const again = new Journal({ dir, logger });
    expect((await again.openJournal()).map((r) => r.jid)).toEqual(jids);
    await again.close();
  });

  it("refuses a message over the record limit, and new ones while too much waits unanswered", async () => {
    const { logger } = createMemoryLogger();
    const journal = new Journal({ dir, logger, maxOpenBytes: 4096 });
    await journal.openJournal();
    await expect(journal.accept(message("huge", "z".repeat(MAX_RECORD_BYTES)), 1)).rejects.toThrow(
      /refused: at most/,
    );
    expect(journal.isDuplicate(message("huge"))).toBe(false);
    const a = await journal.accept(message("a", "q".repeat(3000)), 1);
    await expect(journal.accept(message("b", "q".repeat(3000)), 2)).rejects.toThrow(/retry later/);
    await journal.end(a, "replied", 3);
    expect(journal.openByteCount()).toBe(0);
    await journal.accept(message("b", "q".repeat(3000)), 4);
    await journal.close();
  });

  it("an open that finds the file already compact fdatasyncs it in place; any other compacting open rewrites it", async () => {
    const { logger } = createMemoryLogger();
    const path = join(dir, "inbound.jsonl");
    const first = new Journal({ dir, logger });
    await first.openJournal();
    await first.end(await first.accept(message("done"), 1), "replied", 2);
    const open = await first.accept(message("open"), 3);
    await first.close();
    const before = await stat(path);
    // Not compact (an accept and an end of a finished record): rewritten to the seen keys and the open record.
    const second = new Journal({ dir, logger });
    expect((await second.openJournal()).map((r) => r.jid)).toEqual([open]);
    await second.close();
    const compacted = await stat(path);
    expect(compacted.ino, "the compacting open wrote a new file").not.toBe(before.ino);
    const text = await readFile(path, "utf8");
    expect(
      text
        .trim()
        .split("\n")
        .map((line) => JSON.parse(line).op),
    ).toEqual(["seen", "accept"]);
    // Already compact (nothing happened since): the same file, the same bytes, the same open record.
    const third = new Journal({ dir, logger });
    expect((await third.openJournal()).map((r) => r.jid)).toEqual([open]);
    expect(third.isDuplicate(message("done"))).toBe(true);
    await third.close();
    expect((await stat(path)).ino, "the file was not rewritten").toBe(compacted.ino);
    expect(await readFile(path, "utf8")).toBe(text);
    // The same records and the same size, the keys of one line in another order: not the bytes the compaction
    // would write, so rewritten.
    const seen = text.split("\n")[0]!;
    const reordered = JSON.stringify({ keys: JSON.parse(seen).keys, op: "seen" });
    expect(reordered.length).toBe(seen.length);
    await writeFile(path, text.replace(seen, reordered));
    const edited = (await stat(path)).ino;
    const fourth = new Journal({ dir, logger });
    expect((await fourth.openJournal()).map((r) => r.jid)).toEqual([open]);
    await fourth.close();
    expect((await stat(path)).ino, "a file that is not compact is rewritten").not.toBe(edited);
    expect(await readFile(path, "utf8")).toBe(text);
  });

  it("opened without compaction (a one-shot run), the file keeps its inode", async () => {
    const { logger } = createMemoryLogger();
    const first = new Journal({ dir, logger });
    await first.openJournal();
    await first.accept(message("x"), 1);
    await first.close();
    const inode = (await stat(join(dir, "inbound.jsonl"))).ino;
    const oneShot = new Journal({ dir, logger });
    expect(await oneShot.openJournal({ compact: false })).toHaveLength(1);
    await oneShot.accept(message("y"), 2);
    await oneShot.close();
    expect((await stat(join(dir, "inbound.jsonl"))).ino).toBe(inode);
  });
});

describe("Journal: ends that cannot be written", () => {
  let dir: string;
  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), "clawdis-journal-end-"));
  });
  afterEach(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it("keeps an end that failed and writes it once the file can be written again", async () => {
    const { logger, lines } = createMemoryLogger();
    const journal = new Journal({ dir, logger });
    await journal.openJournal();
    const jid = await journal.accept(message("e1"), 1);
    const path = join(dir, "inbound.jsonl");
    const kept = await readFile(path, "utf8");
    await rm(path);
    await mkdir(join(path, "x"), { recursive: true });
    await journal.end(jid, "replied", 2);
    expect(lines.some((l) => l.message.startsWith("could not end a journal record"))).toBe(true);
    expect(journal.openCount()).toBe(1);
    await rm(path, { recursive: true });
    await writeFile(path, kept);
    await expect.poll(() => journal.openCount(), { timeout: 5000 }).toBe(0);
    await journal.close();
    const again = new Journal({ dir, logger });
    expect(await again.openJournal()).toEqual([]);
    await again.close();
  });
});

describe("Journal: when the fsync starts", () => {
  let dir: string;
  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), "clawdis-journal-order-"));
  });
  afterEach(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it("after the work the accepted record set off in the same turn of the event loop (a turn up to its model request)", async () => {
    const journal = new Journal({ dir, logger: createMemoryLogger().logger });
    await journal.openJournal();
    const order: string[] = [];
    // Every FileHandle's datasync, noted (this test's journal is the only file synced meanwhile).
    const probe = await open(join(dir, "probe"), "w");
    const proto = Object.getPrototypeOf(probe) as { datasync: () => Promise<void> };
    await probe.close();
    const original = proto.datasync;
    proto.datasync = function (this: unknown) {
      order.push("datasync");
      return original.call(this);
    };
    try {
      const { durable } = await journal.acceptWritten(message("m1"), 1);
      // What the taker does at once: promise continuations and ticks, as a turn on its way to the model does.
      await Promise.resolve();
      process.nextTick(() => order.push("tick"));
      await new Promise<void>((resolve) => process.nextTick(resolve));
      order.push("turn");
      await durable;
      order.push("durable");
    } finally {
      proto.datasync = original;
      await journal.close();
    }
    expect(order).toEqual(["tick", "turn", "datasync", "durable"]);
  });
});
