import { describe, expect, it } from "vitest";
import type { WorkItem } from "../work-item.js";
import { Interruption } from "./interruption.js";

const from = (senderId: string): WorkItem =>
  ({
    jid: senderId,
    local: false,
    text: "hi",
    sessionKey: "main",
    message: {
      channel: "telegram",
      chatId: "c",
      chatType: "direct",
      senderId,
      messageId: "m",
      text: "hi",
      receivedAt: 0,
    },
    resolve: () => {},
  }) as WorkItem;

describe("Interruption", () => {
  it("a person's message aborts the turn's drain and names them; the first one counts", () => {
    const worker = new AbortController();
    const interruption = new Interruption(worker.signal);
    expect(interruption.drain.aborted).toBe(false);
    interruption.by(from("alice"));
    interruption.by(from("bob"));
    expect(interruption.drain.aborted).toBe(true);
    expect(interruption.who).toBe("telegram:alice");
    expect(worker.signal.aborted).toBe(false);
  });

  it("the worker's drain aborts it too, and then a person no longer interrupts (the turn resumes after the restart)", () => {
    const worker = new AbortController();
    const interruption = new Interruption(worker.signal);
    worker.abort("stopping");
    expect(interruption.drain.aborted).toBe(true);
    interruption.by(from("alice"));
    expect(interruption.who).toBeUndefined();
  });
});
