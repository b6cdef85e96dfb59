import { readFileSync } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { journalMessage as message } from "../../test/helpers/journal-message.js";
import { createMemoryLogger } from "../core/logger.js";
import { Journal } from "./journal.js";

/** What the journal keeps of a reply's delivery: its delivered parts across compactions, its end at once. */

describe("Journal: delivery records", () => {
  let dir: string;
  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), "clawdis-journal-delivery-"));
  });
  afterEach(async () => {
    await rm(dir, { recursive: true, force: true });
  });
  const file = () => readFileSync(join(dir, "inbound.jsonl"), "utf8");
  const { logger } = createMemoryLogger();

  it("keeps the delivered parts of an open record through two compacting opens", async () => {
    const first = new Journal({ dir, logger });
    await first.openJournal();
    const jid = await first.accept(message("m1"), 10);
    await first.markDelivered(jid, 0, 11);
    await first.close();
    for (let run = 0; run < 2; run++) {
      const again = new Journal({ dir, logger });
      const open = await again.openJournal();
      expect(open.map((r) => [r.jid, r.delivered])).toEqual([[jid, [0]]]);
      await again.close();
    }
  });

  it("writes a reply's end to the file at once when nothing else is being written, and fsyncs it once", async () => {
    const journal = new Journal({ dir, logger });
    await journal.openJournal();
    const jid = await journal.accept(message("m1"), 10);
    const ended = journal.end(jid, "replied", 12);
    // Synchronously, before any microtask: a kill -9 now finds it in the file.
    expect(file()).toContain(`"op":"end","jid":"${jid}"`);
    await ended;
    expect(journal.get(jid)).toBeUndefined();
    await journal.close();
    expect(
      file()
        .split("\n")
        .filter((l) => l.includes(`"op":"end","jid":"${jid}"`)),
    ).toHaveLength(1);
  });

  it("writes a reply's end and delivered parts to the file at once, also while an fsync of earlier records runs", async () => {
    const journal = new Journal({ dir, logger });
    await journal.openJournal();
    const done = await journal.accept(message("m1"), 10);
    const split = await journal.accept(message("m2"), 10);
    // A batch starts its write and fsync; the end and the delivered part come in meanwhile.
    const busy = journal.accept(message("m3"), 11);
    const ended = journal.end(done, "replied", 12);
    const delivered = journal.markDelivered(split, 1, 12);
    // Synchronously, before any I/O callback: a kill -9 now finds both in the file.
    const now = file();
    expect(now).toContain(`"op":"end","jid":"${done}"`);
    expect(now).toContain(`"op":"delivered","jid":"${split}","at":12,"part":1`);
    await Promise.all([busy, ended, delivered]);
    expect(journal.get(done)).toBeUndefined();
    expect(journal.get(split)?.delivered).toEqual([1]);
    await journal.close();
    // Written once, not again by the batch that fsync'd them.
    expect(
      file()
        .split("\n")
        .filter((l) => l.includes(`"op":"end","jid":"${done}"`)),
    ).toHaveLength(1);
  });

  it("an end written at once survives the compaction that runs before it is applied", async () => {
    const journal = new Journal({ dir, logger, compactEvery: 3 });
    await journal.openJournal();
    const a = await journal.accept(message("a"), 1);
    const b = await journal.accept(message("b"), 1);
    // The batch of c reaches the compaction threshold: the file is rewritten while the end of a waits.
    const c = journal.accept(message("c"), 2);
    const endA = journal.end(a, "replied", 3);
    await Promise.all([c, endA]);
    await journal.close();
    const again = new Journal({ dir, logger });
    const open = await again.openJournal();
    expect(open.map((r) => r.message.messageId)).toEqual(["b", "c"]);
    expect(open.map((r) => r.jid)).toContain(b);
    await again.close();
  });
});
