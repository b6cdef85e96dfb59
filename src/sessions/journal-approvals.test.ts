import { mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { createMemoryLogger } from "../core/logger.js";
import type { ApprovalAsk } from "./approval-record.js";
import { Journal } from "./journal.js";

const ask = (id: string, at: number): ApprovalAsk => ({
  id,
  at,
  sessionKey: "main",
  jid: `j-${id}`,
  callId: `call-${id}`,
  waiting: [`call-${id}`],
  tool: "bash",
  what: "run `ls` in /w",
  command: "ls",
  chat: { channel: "telegram", chatId: "1", chatType: "direct" },
  requester: { channel: "telegram", senderId: "1", authority: "owner" },
});

describe("Journal: approval records", () => {
  let dir: string;
  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), "clawdis-journal-approvals-"));
  });
  afterEach(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it("an ask waits across a restart and a compaction until its decision; a decided one is gone", async () => {
    const { logger } = createMemoryLogger();
    const first = new Journal({ dir, logger });
    await first.openJournal();
    await first.approvalAsked(ask("a1", 10));
    await first.approvalAsked(ask("a2", 11));
    await first.approvalDecided("a1", "deny", "telegram:1", 12, "no");
    expect(first.pendingApprovals().map((a) => a.id)).toEqual(["a2"]);
    await first.close();

    // The open compacts the file: the pending ask is kept, the decided one dropped.
    const second = new Journal({ dir, logger });
    await second.openJournal();
    expect(second.pendingApprovals()).toEqual([ask("a2", 11)]);
    const text = await readFile(second.filePath, "utf8");
    expect(text).not.toContain('"a1"');
    await second.approvalDecided("a2", "approve", "local", 13);
    await second.close();

    const third = new Journal({ dir, logger });
    await third.openJournal();
    expect(third.pendingApprovals()).toEqual([]);
    await third.close();
  });
});
