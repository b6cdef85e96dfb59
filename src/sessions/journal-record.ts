import type {
  ApprovalDecision,
  Attachment,
  Authority,
  ChatType,
  InboundMessage,
  InternalKind,
  ReplyContext,
} from "../plugin-api/types.js";

/**
 * The journal's own record of an accepted message (version 2), built from the inbound message by a mapper so
 * that the plugin contract can grow without changing what is persisted, and old records stay readable.
 * Version 1 records (before 0.2) stored the plugin's `InboundMessage` verbatim as `msg`, without `v`.
 */
export interface JournalMessageV2 {
  v: 2;
  channel: string;
  chatId: string;
  chatType: ChatType;
  senderId: string;
  senderName?: string;
  messageId: string;
  transportMessageId?: string;
  replyTo?: ReplyContext;
  text: string;
  attachments?: Attachment[];
  mentioned?: boolean;
  receivedAt: number;
  automated?: boolean;
  allowedTools?: string[];
  sessionKey?: string;
  /** Who it is from, as accepted (absent in records from before authorities: see `authorityOf`). */
  authority?: Authority;
  /** Input the core handed in (no transport sent it), with its kind. */
  internal?: { kind: InternalKind; decisions?: Record<string, ApprovalDecision> };
  /** From the gateway's own API: the reply travels in the outcome, never through a transport. */
  local: boolean;
}

/**
 * Checked by tsc: the record carries every field of InboundMessage, with its type. A field added to the contract
 * and not to the record fails to compile here; the mapper test that round-trips a message with every field set
 * then asks for it in `toJournalMessage`.
 */
type CarriesEveryField<T extends Pick<JournalMessageV2, keyof InboundMessage>> = T;
export type JournalCarriesInbound = CarriesEveryField<InboundMessage>;

/** The persisted form of an accepted message. Only known fields are kept (a plugin's extras are not persisted). */
export function toJournalMessage(message: InboundMessage, origin: { local: boolean }): JournalMessageV2 {
  const record: JournalMessageV2 = {
    v: 2,
    channel: message.channel,
    chatId: message.chatId,
    chatType: message.chatType,
    senderId: message.senderId,
    messageId: message.messageId,
    text: message.text,
    receivedAt: message.receivedAt,
    local: origin.local,
  };
  if (message.senderName !== undefined) record.senderName = message.senderName;
  if (message.transportMessageId !== undefined) record.transportMessageId = message.transportMessageId;
  if (message.replyTo !== undefined) record.replyTo = message.replyTo;
  if (message.attachments?.length) record.attachments = message.attachments;
  if (message.mentioned !== undefined) record.mentioned = message.mentioned;
  if (message.automated !== undefined) record.automated = message.automated;
  if (message.allowedTools !== undefined) record.allowedTools = message.allowedTools;
  if (message.sessionKey !== undefined) record.sessionKey = message.sessionKey;
  if (message.authority !== undefined) record.authority = message.authority;
  if (message.internal !== undefined) {
    const { kind, decisions } = message.internal;
    record.internal = { kind, ...(decisions ? { decisions } : {}) };
  }
  return record;
}

/**
 * The message and its origin from a persisted record of either version. A version 1 record does not say
 * whether it came from the local API: `local` is then undefined and the caller decides (no transport of that
 * channel: local).
 */
export function fromJournalMessage(raw: unknown): { message: InboundMessage; local?: boolean } {
  const r = raw as Partial<JournalMessageV2> & InboundMessage;
  const { v, local, ...rest } = r;
  const message = rest as InboundMessage;
  return v === 2 ? { message, local: local === true } : { message };
}
