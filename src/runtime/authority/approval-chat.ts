import type { ChatType } from "../../plugin-api/types.js";
import type { Authority } from "./authority.js";

/** A chat a prompt can go to. */
export interface PromptChat {
  channel: string;
  chatId: string;
  chatType: ChatType;
}

/**
 * Where an approval's prompt goes (docs/tools.md, "Who starts a turn"): a person's turn asks in its own chat; an
 * automated turn (a webhook, a reminder, a job's result, a sub-agent's notice) has no person to ask, so it asks in
 * the owner's chat of the session (the chat the owner last wrote from there), and in its own chat only when the
 * owner never wrote in the session. Only the owner (or the turn's person) can answer a prompt. Pure.
 */
export function promptChat(
  turnChat: PromptChat,
  requester: Authority,
  ownerChat: PromptChat | undefined,
): PromptChat {
  if (requester !== "automated" || !ownerChat) return turnChat;
  return { channel: ownerChat.channel, chatId: ownerChat.chatId, chatType: ownerChat.chatType };
}
