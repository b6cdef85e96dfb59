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
  /** A button press (`callback_query`): the id to answer it with (`answerCallbackQuery`). */
  callbackQueryId?: string;
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
  if (update.callback_query) return pressOf(update, options.receivedAt);
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

/**
 * A press of one of the bot's buttons (an approval's prompt) as the presser's message in that chat: its `data` is
 * the text (`/approve`, …), and it addresses the bot. Undefined for a press without data or outside a chat. Pure.
 */
function pressOf(update: Update, receivedAt: number): TelegramInbound | undefined {
  const press = update.callback_query;
  const chat = press?.message?.chat;
  if (!press || press.from.is_bot || !chat || press.data === undefined || press.data === "") return undefined;
  const chatType = chat.type === "private" ? "direct" : "group";
  const message: InboundMessage = {
    channel: CHANNEL,
    chatId: String(chat.id),
    chatType,
    senderId: String(press.from.id),
    senderName: displayName(press.from),
    messageId: String(update.update_id),
    text: press.data,
    receivedAt,
    ...(chatType === "group" ? { mentioned: true } : {}),
  };
  return {
    message,
    files: [],
    callbackQueryId: press.id,
    ...(press.from.username ? { username: press.from.username } : {}),
  };
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

/** The file fields of a Telegram media object (a photo size, document, voice note, audio or video). */
interface TelegramFile {
  file_id: string;
  file_size?: number;
  file_name?: string;
  mime_type?: string;
}

/**
 * The media a message may carry, in the order its files are listed: where to find the file, and the name and
 * MIME type to use when Telegram gives none (photos and voice notes never have a name).
 */
const MEDIA: readonly {
  kind: AttachmentKind;
  file(msg: Message): TelegramFile | undefined;
  name(messageId: number): string;
  mimeType?: string;
}[] = [
  // Telegram lists a photo's sizes smallest first: the last is the original.
  {
    kind: "image",
    file: (msg) => msg.photo?.at(-1),
    name: (id) => `photo-${id}.jpg`,
    mimeType: "image/jpeg",
  },
  { kind: "document", file: (msg) => msg.document, name: (id) => `document-${id}` },
  { kind: "voice", file: (msg) => msg.voice, name: (id) => `voice-${id}.ogg`, mimeType: "audio/ogg" },
  { kind: "audio", file: (msg) => msg.audio, name: (id) => `audio-${id}` },
  { kind: "video", file: (msg) => msg.video, name: (id) => `video-${id}.mp4` },
];

function filesOf(msg: Message): FileToFetch[] {
  const files: FileToFetch[] = [];
  for (const media of MEDIA) {
    const file = media.file(msg);
    if (!file) continue;
    const fetch: FileToFetch = { kind: media.kind, fileId: file.file_id };
    const fileName = file.file_name ?? media.name(msg.message_id);
    const mimeType = file.mime_type ?? media.mimeType;
    if (fileName) fetch.fileName = fileName;
    if (mimeType) fetch.mimeType = mimeType;
    if (file.file_size !== undefined) fetch.sizeBytes = file.file_size;
    files.push(fetch);
  }
  return files;
}
