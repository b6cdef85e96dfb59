import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { createMemoryLogger } from "../core/logger.js";
import type { InboundMessage } from "../plugin-api/types.js";
import { Journal } from "./journal.js";

function message(id: string, text = "hi"): InboundMessage {
  return {
    channel: "test",
    chatId: "c1",
    chatType: "direct",
    senderId: "s1",
    messageId: id,
    text,
    receivedAt: 1,
  };
}

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
});
