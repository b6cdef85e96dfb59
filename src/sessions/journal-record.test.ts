import { describe, expect, it } from "vitest";
import type { InboundMessage } from "../plugin-api/types.js";
import { fromJournalMessage, toJournalMessage } from "./journal-record.js";

const message: InboundMessage = {
  channel: "telegram",
  chatId: "42",
  chatType: "group",
  senderId: "7",
  senderName: "Ann",
  messageId: "update-9",
  transportMessageId: "1001",
  replyTo: { messageId: "1000", text: "earlier", fromAgent: true },
  text: "hi",
  attachments: [{ kind: "image", path: "/state/plugins/telegram/inbox/a.jpg", sizeBytes: 10 }],
  mentioned: true,
  receivedAt: 5,
};

describe("journal record mapper", () => {
  it("writes version 2 with the origin, and reads back the same message", () => {
    const record = toJournalMessage(message, { local: false });
    expect(record).toMatchObject({ v: 2, local: false, channel: "telegram", transportMessageId: "1001" });
    expect(fromJournalMessage(JSON.parse(JSON.stringify(record)))).toEqual({ message, local: false });
    expect(fromJournalMessage(toJournalMessage(message, { local: true })).local).toBe(true);
  });

  it("carries every field of the contract (a field added to InboundMessage fails tsc here until it is)", () => {
    const complete: Required<InboundMessage> = {
      channel: "webhook",
      chatId: "hook:deploy",
      chatType: "direct",
      senderId: "hook:deploy",
      senderName: "deploy",
      messageId: "m-1",
      transportMessageId: "t-1",
      replyTo: { messageId: "t-0", text: "earlier" },
      text: "deployed",
      attachments: [{ kind: "document", path: "/state/plugins/webhook/inbox/log.txt" }],
      mentioned: false,
      receivedAt: 5,
      automated: true,
      allowedTools: ["read"],
      sessionKey: "hook:deploy",
      authority: "automated",
      internal: {
        kind: "approval-answer",
        decisions: { c1: { run: true }, c2: { run: false, reason: "no" } },
      },
    };
    expect(fromJournalMessage(toJournalMessage(complete, { local: false })).message).toEqual(complete);
  });

  it("keeps only the fields it knows (a plugin's extras are not persisted)", () => {
    const extra = { ...message, secretUrl: "https://api.telegram.org/file/bot123:abc/x" } as InboundMessage;
    expect(JSON.stringify(toJournalMessage(extra, { local: false }))).not.toContain("secretUrl");
  });

  it("reads a version 1 record (the message verbatim) without deciding its origin", () => {
    const v1 = {
      channel: "api",
      chatId: "c",
      chatType: "direct",
      senderId: "local",
      messageId: "m",
      text: "t",
      receivedAt: 1,
    };
    expect(fromJournalMessage(v1)).toEqual({ message: v1 });
  });
});
