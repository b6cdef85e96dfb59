import {
  areJidsSameUser,
  isJidBroadcast,
  isJidGroup,
  isJidNewsletter,
  isLidUser,
  jidDecode,
  jidNormalizedUser,
  normalizeMessageContent,
  type proto,
  toNumber,
  type WAMessage,
} from "@whiskeysockets/baileys";
import type { AttachmentKind, InboundMessage, ReplyContext } from "../../src/plugin-api/index.js";

/**
 * Baileys' `WAMessage` to the one `InboundMessage`, or the reason it is not input. Pure: every lookup it needs
 * (the account, LID → phone numbers, the ids this transport sent) comes in `view`.
 *
 * - `messageId` is the WhatsApp message id (`key.id`): the dedupe key, stable across redeliveries;
 * - direct chats: `chatType: "direct"`, `senderId` the sender's E.164 number (`+4915…`); a sender that writes as
 *   a LID (`…@lid`) is mapped to its phone number (`key.remoteJidAlt`/`participantAlt`, else the socket's
 *   mapping), so allowlists and sessions still match; one without a known number keeps its LID as `senderId`
 *   (and is denied unless `"*"`);
 * - groups: `chatType: "group"`, `chatId` the group JID; `mentioned` when the account's JID or LID is among the
 *   mentioned JIDs, a `mentionPatterns` regex matches the text, or the message replies to the account;
 * - the account's own messages are skipped (no echo loops), except in its self-chat ("Message yourself"), and even
 *   there the messages this transport sent are skipped;
 * - status posts, broadcasts, newsletters, reactions, edits/revokes and messages without text or media are skipped.
 */

export interface AccountView {
  /** The account's own phone JID, normalized ("15550001111@s.whatsapp.net"). */
  phoneJid: string;
  /** The account's own LID, normalized ("9000…@lid"), when known. */
  lidJid?: string;
}

export interface InboundView {
  channel: string;
  me: AccountView;
  mentionPatterns: readonly RegExp[];
  /** The phone JID of a LID JID, when known. */
  phoneForLid(lid: string): string | undefined;
  /** Whether this transport sent the message with this id (its own replies, seen again in the self-chat). */
  sentByUs(id: string): boolean;
  receivedAt: number;
}

/** A media file the message carries, to download (by the caller) before handing the message in. */
export interface MediaInfo {
  kind: AttachmentKind;
  mimeType?: string;
  fileName?: string;
  sizeBytes?: number;
  caption?: string;
}

export type ToInboundResult =
  | { ok: true; message: InboundMessage; media?: MediaInfo }
  | { ok: false; skip: string };

const MEDIA: [keyof proto.IMessage, AttachmentKind][] = [
  ["imageMessage", "image"],
  ["videoMessage", "video"],
  ["audioMessage", "audio"],
  ["documentMessage", "document"],
  ["stickerMessage", "sticker"],
];

export function toInbound(msg: WAMessage, view: InboundView): ToInboundResult {
  const key = msg.key;
  const remoteJid = key?.remoteJid ? jidNormalizedUser(key.remoteJid) : "";
  const id = key?.id;
  if (!remoteJid || !id) return { ok: false, skip: "no chat or message id" };
  if (remoteJid === "status@broadcast" || isJidBroadcast(remoteJid))
    return { ok: false, skip: "status or broadcast" };
  if (isJidNewsletter(remoteJid)) return { ok: false, skip: "newsletter" };
  const content = normalizeMessageContent(msg.message);
  if (!content) return { ok: false, skip: "no content" };
  if (
    content.protocolMessage ||
    content.reactionMessage ||
    (content.senderKeyDistributionMessage && !hasBody(content))
  ) {
    return { ok: false, skip: "protocol message, reaction or key distribution" };
  }
  const group = isJidGroup(remoteJid) === true;
  const isMe = (jid: string | undefined) =>
    jid !== undefined && (areJidsSameUser(jid, view.me.phoneJid) || areJidsSameUser(jid, view.me.lidJid));

  const fromMe = key.fromMe === true;
  const selfChat = !group && isMe(remoteJid);
  if (fromMe && !selfChat) return { ok: false, skip: "the account's own message" };
  if (fromMe && view.sentByUs(id)) return { ok: false, skip: "sent by this transport" };

  const rawSender = group ? key.participant || key.participantAlt || "" : remoteJid;
  const altSender = group ? key.participantAlt : key.remoteJidAlt;
  const senderJid = fromMe ? view.me.phoneJid : phoneJidOf(rawSender, altSender, view);
  const senderId = e164(senderJid) ?? jidNormalizedUser(rawSender);
  if (!senderId) return { ok: false, skip: "no sender" };

  const { text, contextInfo, media } = bodyOf(content);
  if (text === "" && !media) return { ok: false, skip: "no text or media" };

  const replyTo = replyContext(contextInfo, view, isMe);
  const mentioned = group
    ? (contextInfo?.mentionedJid ?? []).some((jid) => isMe(jid)) ||
      view.mentionPatterns.some((pattern) => pattern.test(text)) ||
      replyTo?.fromAgent === true
    : undefined;

  const timestamp = toNumber(msg.messageTimestamp as number | null | undefined);
  const message: InboundMessage = {
    channel: view.channel,
    chatId: remoteJid,
    chatType: group ? "group" : "direct",
    senderId,
    ...(msg.pushName ? { senderName: msg.pushName } : {}),
    messageId: id,
    text,
    ...(replyTo ? { replyTo } : {}),
    ...(mentioned !== undefined ? { mentioned } : {}),
    receivedAt: timestamp > 0 ? Math.min(timestamp * 1000, view.receivedAt) : view.receivedAt,
  };
  return media ? { ok: true, message, media } : { ok: true, message };
}

function hasBody(content: proto.IMessage): boolean {
  const { text, media } = bodyOf(content);
  return text !== "" || media !== undefined;
}

/** The phone JID of a sender: itself when it is one, else its alt JID, else the socket's LID mapping. */
function phoneJidOf(jid: string, alt: string | null | undefined, view: InboundView): string | undefined {
  const normalized = jidNormalizedUser(jid);
  if (!isLidUser(normalized)) return normalized;
  if (alt && !isLidUser(alt)) return jidNormalizedUser(alt);
  const mapped = view.phoneForLid(normalized);
  return mapped ? jidNormalizedUser(mapped) : undefined;
}

/** "+4915112345678" for a phone JID; undefined for anything else. */
export function e164(jid: string | undefined): string | undefined {
  if (!jid) return undefined;
  const decoded = jidDecode(jid);
  if (!decoded || (decoded.server !== "s.whatsapp.net" && decoded.server !== "c.us")) return undefined;
  return /^[0-9]{6,16}$/.test(decoded.user) ? `+${decoded.user}` : undefined;
}

interface Body {
  text: string;
  contextInfo?: proto.IContextInfo | null;
  media?: MediaInfo;
}

function bodyOf(content: proto.IMessage): Body {
  if (content.conversation) return { text: content.conversation };
  if (content.extendedTextMessage) {
    return {
      text: content.extendedTextMessage.text ?? "",
      contextInfo: content.extendedTextMessage.contextInfo,
    };
  }
  for (const [field, kind] of MEDIA) {
    const media = content[field] as
      | {
          caption?: string | null;
          mimetype?: string | null;
          fileName?: string | null;
          fileLength?: number | Long | null;
          contextInfo?: proto.IContextInfo | null;
        }
      | null
      | undefined;
    if (!media) continue;
    const caption = media.caption ?? "";
    const size =
      media.fileLength === null || media.fileLength === undefined ? undefined : toNumber(media.fileLength);
    return {
      text: caption,
      contextInfo: media.contextInfo,
      media: {
        kind: field === "audioMessage" && (content.audioMessage?.ptt ?? false) ? "voice" : kind,
        ...(media.mimetype ? { mimeType: media.mimetype } : {}),
        ...(media.fileName ? { fileName: media.fileName } : {}),
        ...(size !== undefined && Number.isFinite(size) ? { sizeBytes: size } : {}),
        ...(caption ? { caption } : {}),
      },
    };
  }
  return { text: "" };
}

type Long = Parameters<typeof toNumber>[0] & object;

function replyContext(
  contextInfo: proto.IContextInfo | null | undefined,
  view: InboundView,
  isMe: (jid: string | undefined) => boolean,
): ReplyContext | undefined {
  const quotedId = contextInfo?.stanzaId;
  if (!contextInfo || !quotedId) return undefined;
  const quoted = normalizeMessageContent(contextInfo.quotedMessage ?? undefined);
  const quotedText = quoted ? bodyOf(quoted).text : "";
  const participant = contextInfo.participant ?? undefined;
  const fromAgent = isMe(participant) || view.sentByUs(quotedId);
  const senderPhone = participant ? phoneJidOf(participant, undefined, view) : undefined;
  const senderId = e164(senderPhone);
  return {
    messageId: quotedId,
    ...(quotedText ? { text: quotedText } : {}),
    ...(senderId ? { senderId } : {}),
    ...(fromAgent ? { fromAgent: true } : {}),
  };
}
