import type { Message, MessageEntity, Update, User } from "grammy/types";
import type { AttachmentKind, InboundMessage } from "../../src/plugin-api/types.js";

/** The bot as `getMe` described it: what mention detection needs. */
export interface BotIdentity {
  id: number;
  username: string;
}

/** A file of an inbound message, to download before the message is handed in. */
export interface FileToFetch {
  kind: AttachmentKind;
  fileId: string;
  fileName?: string;
  mimeType?: string;
  sizeBytes?: number;
}

export interface TelegramInbound {
  message: InboundMessage;
  /** The sender's @username (without the @), for `allowFrom` entries written as usernames. */
  username?: string;
  files: FileToFetch[];
}

export const CHANNEL = "telegram";

/**
 * One Telegram update as the gateway's InboundMessage, or undefined for updates clawdis does not answer (edits,
 * channel posts, service messages, other bots). Pure. The dedupe key `messageId` is the update id (stable
 * across redeliveries of the same update), `transportMessageId` Telegram's message id (what a reply quotes),
 * `chatId` the chat's id. Private chats are `direct`; groups and supergroups `group`, with `mentioned` when the
 * text or caption mentions the bot (`@name`, a `text_mention` of it, `/cmd@name`) or replies to one of its
 * messages — or always when `requireMention` is off. A leading `/cmd@name` loses its `@name`, so chat commands
 * such as `/status@bot` work as `/status`.
 */
export function toInbound(
  update: Update,
  bot: BotIdentity,
  options: { requireMention: boolean; receivedAt: number },
): TelegramInbound | undefined {
  const msg = update.message;
  if (!msg?.from || msg.from.is_bot) return undefined;
  const chatType = msg.chat.type === "private" ? "direct" : "group";
  const files = filesOf(msg);
  const raw = msg.text ?? msg.caption ?? "";
  const entities = msg.entities ?? msg.caption_entities ?? [];
  if (raw === "" && files.length === 0) return undefined;
  const message: InboundMessage = {
    channel: CHANNEL,
    chatId: String(msg.chat.id),
    chatType,
    senderId: String(msg.from.id),
    senderName: displayName(msg.from),
    messageId: String(update.update_id),
    transportMessageId: String(msg.message_id),
    text: stripBotFromCommand(raw, bot.username),
    receivedAt: options.receivedAt,
  };
  const quoted = msg.reply_to_message;
  if (quoted) {
    const text = quoted.text ?? quoted.caption;
    message.replyTo = {
      messageId: String(quoted.message_id),
      ...(text !== undefined ? { text } : {}),
      ...(quoted.from ? { senderId: String(quoted.from.id), senderName: displayName(quoted.from) } : {}),
      ...(quoted.from?.id === bot.id ? { fromAgent: true } : {}),
    };
  }
  if (chatType === "group") {
    message.mentioned =
      !options.requireMention || mentionsBot(raw, entities, bot) || quoted?.from?.id === bot.id;
  }
  return { message, files, ...(msg.from.username ? { username: msg.from.username } : {}) };
}

export function displayName(user: User): string {
  const name = [user.first_name, user.last_name].filter(Boolean).join(" ").trim();
  return name || (user.username ? `@${user.username}` : String(user.id));
}

/** Whether the text addresses the bot: a mention of it (by entity or in the text), or a command `/x@bot`. */
export function mentionsBot(text: string, entities: readonly MessageEntity[], bot: BotIdentity): boolean {
  const handle = `@${bot.username}`.toLowerCase();
  for (const entity of entities) {
    const part = text.slice(entity.offset, entity.offset + entity.length).toLowerCase();
    if (entity.type === "mention" && part === handle) return true;
    if (entity.type === "text_mention" && entity.user.id === bot.id) return true;
    if (entity.type === "bot_command" && part.endsWith(handle)) return true;
  }
  return new RegExp(`(^|[^\\w@])${escapeRegExp(handle)}(?![\\w])`, "i").test(text);
}

function stripBotFromCommand(text: string, username: string): string {
  return text.replace(new RegExp(`^(/[A-Za-z0-9_]+)@${escapeRegExp(username)}(?![\\w])`, "i"), "$1");
}

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
}

function filesOf(msg: Message): FileToFetch[] {
  const files: FileToFetch[] = [];
  const add = (file: FileToFetch & { sizeBytes?: number | undefined }) => {
    const clean: FileToFetch = { kind: file.kind, fileId: file.fileId };
    if (file.fileName) clean.fileName = file.fileName;
    if (file.mimeType) clean.mimeType = file.mimeType;
    if (file.sizeBytes !== undefined) clean.sizeBytes = file.sizeBytes;
    files.push(clean);
  };
  if (msg.photo && msg.photo.length > 0) {
    // Telegram lists the sizes smallest first: the last is the original.
    const best = msg.photo[msg.photo.length - 1]!;
    add({
      kind: "image",
      fileId: best.file_id,
      fileName: `photo-${msg.message_id}.jpg`,
      mimeType: "image/jpeg",
      sizeBytes: best.file_size,
    });
  }
  const doc = msg.document;
  if (doc) {
    add({
      kind: "document",
      fileId: doc.file_id,
      fileName: doc.file_name ?? `document-${msg.message_id}`,
      mimeType: doc.mime_type,
      sizeBytes: doc.file_size,
    });
  }
  if (msg.voice) {
    add({
      kind: "voice",
      fileId: msg.voice.file_id,
      fileName: `voice-${msg.message_id}.ogg`,
      mimeType: msg.voice.mime_type ?? "audio/ogg",
      sizeBytes: msg.voice.file_size,
    });
  }
  const audio = msg.audio;
  if (audio) {
    add({
      kind: "audio",
      fileId: audio.file_id,
      fileName: audio.file_name ?? `audio-${msg.message_id}`,
      mimeType: audio.mime_type,
      sizeBytes: audio.file_size,
    });
  }
  if (msg.video) {
    add({
      kind: "video",
      fileId: msg.video.file_id,
      fileName: msg.video.file_name ?? `video-${msg.message_id}.mp4`,
      mimeType: msg.video.mime_type,
      sizeBytes: msg.video.file_size,
    });
  }
  return files;
}
