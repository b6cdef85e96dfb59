import { describe, expect, it } from "vitest";
import type { InboundMessage, TurnOutcome } from "../plugin-api/types.js";
import { acceptedWork } from "./accepted-work.js";

const message: InboundMessage = {
  channel: "chat",
  chatId: "c1",
  chatType: "direct",
  senderId: "alice",
  messageId: "m1",
  text: "hi",
  receivedAt: 1,
};

describe("acceptedWork", () => {
  it("the item carries the record's id and durability; the answer's outcome is what the item resolves", async () => {
    const durable = Promise.resolve();
    const { item, result } = acceptedWork(
      { jid: "j7", durable },
      { message, sessionKey: "main", local: true },
    );
    expect(item).toMatchObject({ jid: "j7", sessionKey: "main", message, text: "hi", local: true, durable });
    if (result.status !== "accepted") throw new Error(`not accepted: ${result.status}`);
    expect(result.journalId).toBe("j7");
    const outcome = { stopReason: "end", payloads: [] } as unknown as TurnOutcome;
    item.resolve(outcome);
    expect(await result.done).toBe(outcome);
  });
});
