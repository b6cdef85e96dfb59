import type { InboundMessage } from "../../src/plugin-api/types.js";

/** A direct message from one sender in one chat, as the journal tests accept it: `id` is its transport id. */
export function journalMessage(id: string, text = "hi"): InboundMessage {
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
