import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { createMemoryLogger } from "../core/logger.js";
import { Journal } from "./journal.js";

describe("Journal: a record queued as the flush loop ends", () => {
  let dir: string;
  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), "clawdis-journal-stall-"));
  });
  afterEach(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it("an end written right after the accept's fsync resolved is written (the loop starts again)", async () => {
    const { logger } = createMemoryLogger();
    const journal = new Journal({ dir, logger });
    await journal.openJournal();
    const message = {
      channel: "test",
      chatId: "c1",
      chatType: "direct" as const,
      senderId: "s1",
      messageId: "m1",
      text: "hi",
      receivedAt: 1,
    };
    const { jid, durable } = await journal.acceptWritten(message, 1);
    // The continuation of `durable` runs before the flush loop that resolved it is marked done.
    await durable;
    let timer: NodeJS.Timeout | undefined;
    const stalled = new Promise<string>((resolve) => {
      timer = setTimeout(() => resolve("the end record was not written within 5 s"), 5000);
    });
    const ended = journal.end(jid, "replied", 2).then(() => "written");
    expect(await Promise.race([ended, stalled])).toBe("written");
    clearTimeout(timer);
    expect(journal.openCount()).toBe(0);
    await journal.close();
  });
});
