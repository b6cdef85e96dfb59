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
 * users, or one of them and the owner on the web chat. One person alone is never labelled.
 *
 * A session's context is its tail, which grows by appending from one turn to the next: what was found in the
 * entries up to a length is kept by the first entry (entries are never changed once read), and the next call on
 * a tail that starts with it looks only at the entries after that. Same answer as a full scan.
 */
export function labelsDirectMessages(entries: readonly TranscriptEntry[]): boolean {
  const head = entries[0];
  if (head === undefined) return false;
  let seen = directSeen.get(head);
  // The same tail grown: the same first entry, and the last entry looked at still in its place.
  if (seen === undefined || seen.scanned > entries.length || entries[seen.scanned - 1] !== seen.last) {
    seen = { scanned: 0, last: undefined, first: undefined, several: false };
    directSeen.set(head, seen);
  }
  for (; !seen.several && seen.scanned < entries.length; seen.scanned++) {
    const entry = entries[seen.scanned] as TranscriptEntry;
    seen.last = entry;
    if (entry.type !== "message") continue;
    const who = directSender(entry as MessageEntry);
    if (who === undefined) continue;
    if (seen.first === undefined) seen.first = who;
    else if (who !== seen.first) seen.several = true;
  }
  return seen.several;
}

/** What `labelsDirectMessages` found in a tail so far, by the tail's first entry. */
const directSeen = new WeakMap<
  TranscriptEntry,
  { scanned: number; last: TranscriptEntry | undefined; first: string | undefined; several: boolean }
>();
