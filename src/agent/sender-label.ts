import type { MessageEntry, MessageMeta, TranscriptEntry } from "../sessions/types.js";

/** The sender id of every local client (web chat, terminal chat, `clawdis agent`): the gateway token's holder. */
export const LOCAL_SENDER_ID = "local";

/** The name a person's message is shown under to the model: `Name: text`. */
export function senderLabel(meta: MessageMeta | undefined): string {
  return meta?.senderName ?? meta?.senderId ?? "someone";
}

/**
 * The label of input the core handed in (`InboundMessage.internal`), by its kind: `[reminder]`,
 * `[approval-answer]`, …; undefined for anything else. Shown to the model before the text, in any chat.
 */
export function internalLabel(meta: MessageMeta | undefined): string | undefined {
  return typeof meta?.internal === "string" ? `[${meta.internal}]` : undefined;
}

/**
 * Who wrote a person's direct message, as one identity: the channel and the sender's id there, every local client
 * counting as one (the owner, whichever app). Undefined for what is no person's direct message (a group message,
 * automated or internal input, the agent's own messages, an entry without a sender).
 */
export function directSender(entry: MessageEntry): string | undefined {
  const { message, meta } = entry;
  if (
    message?.role !== "user" ||
    !meta ||
    meta.chatType === "group" ||
    meta.automated === true ||
    meta.internal !== undefined
  )
    return undefined;
  if (typeof meta.senderId !== "string") return undefined;
  if (meta.senderId === LOCAL_SENDER_ID) return LOCAL_SENDER_ID;
  return `${meta.channel ?? ""}\u0000${meta.senderId}`;
}

/**
 * Whether the model is told who wrote each direct message, as it is in groups: when the direct messages among
 * `entries` (what the model is sent) come from more than one identity (`directSender`), e.g. two allowed Telegram
 * users, or one of them and the owner on the web chat. One person alone is never labelled. Pure.
 */
export function labelsDirectMessages(entries: readonly TranscriptEntry[]): boolean {
  let first: string | undefined;
  for (const entry of entries) {
    if (entry.type !== "message") continue;
    const who = directSender(entry as MessageEntry);
    if (who === undefined) continue;
    if (first === undefined) first = who;
    else if (who !== first) return true;
  }
  return false;
}
