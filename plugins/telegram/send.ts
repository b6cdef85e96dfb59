import { type Api, InputFile } from "grammy";
import type { OutboundMessage, SendFailure, SendResult } from "../../src/plugin-api/types.js";
import { classifyError } from "./classify-error.js";
import { grammySignal } from "./grammy-signal.js";
import { renderMarkdown } from "./render-markdown.js";
import { confirmingApi } from "./telegram-api.js";

/**
 * A failed send, as the core's outbox reads it (plugin-api SendFailure): the words, Telegram's retry_after for a
 * 429, and `permanent` when the chat refuses it for good (400, 403: see classifyError).
 */
export class TelegramSendError extends Error implements SendFailure {
  readonly retryAfterMs?: number;
  readonly permanent: boolean;
  constructor(message: string, options: { retryAfterMs?: number; permanent?: boolean } = {}) {
    super(message);
    this.name = "TelegramSendError";
    if (options.retryAfterMs !== undefined) this.retryAfterMs = options.retryAfterMs;
    this.permanent = options.permanent === true;
  }
}

/**
 * Sends one part of a reply (or a notice) to its chat: the Markdown rendered as Telegram HTML, and again as clean
 * plain text if Telegram refuses the entities; in groups as a reply to the message that asked; then the files
 * the agent attached (images as photos, everything else as documents; the core's outbox hands each file in as a
 * part of its own, so a failed upload is retried without the text). Honours `signal`. Throws TelegramSendError,
 * with `retryAfterMs` for a 429 and `permanent` for a refusal that cannot pass, so the outbox retries this part
 * alone or gives it up. `confirmed` (Transport.send's) is called when the Bot API takes the message's last
 * request: its text's, or its last file's.
 */
export async function sendTelegram(
  api: Api,
  message: OutboundMessage,
  signal: AbortSignal,
  buttons: ChatButtons = new Map(),
  confirmed?: () => void,
): Promise<SendResult> {
  if (message.closesButtons) await closeButtons(api, buttons, message.chatId, signal);
  const keyboard = message.buttons?.length
    ? {
        reply_markup: {
          inline_keyboard: [message.buttons.map((b) => ({ text: b.text, callback_data: b.data }))],
        },
      }
    : {};
  const replyTo = Number(message.replyToMessageId);
  const quote =
    message.chatType === "group" && Number.isSafeInteger(replyTo) && replyTo > 0
      ? { reply_parameters: { message_id: replyTo, allow_sending_without_reply: true } }
      : {};
  const files = message.attachments ?? [];
  // The client of the message's last request: the one whose answer confirms it.
  const last = confirmed ? confirmingApi(api, confirmed) : api;
  let firstId: number | undefined;
  try {
    if (message.text.trim().length > 0) {
      const rendered = renderMarkdown(message.text);
      const textApi = files.length === 0 ? last : api;
      try {
        const sent = await textApi.sendMessage(
          message.chatId,
          rendered.html,
          { parse_mode: "HTML", ...quote, ...keyboard },
          grammySignal(signal),
        );
        firstId = sent.message_id;
      } catch (error) {
        if (classifyError(error).kind !== "bad-entities") throw error;
        const sent = await textApi.sendMessage(
          message.chatId,
          rendered.plain,
          { ...quote, ...keyboard },
          grammySignal(signal),
        );
        firstId = sent.message_id;
      }
    }
    for (const [index, file] of files.entries()) {
      const input = new InputFile(file.path, file.fileName);
      const extra = {
        ...(file.caption ? { caption: file.caption } : {}),
        ...(firstId === undefined ? quote : {}),
      };
      const fileApi = index === files.length - 1 ? last : api;
      const sent =
        file.kind === "image"
          ? await fileApi.sendPhoto(message.chatId, input, extra, grammySignal(signal))
          : await fileApi.sendDocument(message.chatId, input, extra, grammySignal(signal));
      firstId ??= sent.message_id;
    }
  } catch (error) {
    if (signal.aborted) throw error;
    const failure = classifyError(error);
    throw new TelegramSendError(`${failure.message} (sending to chat ${message.chatId})`, {
      ...(failure.kind === "rate-limit" ? { retryAfterMs: failure.retryAfterMs } : {}),
      permanent: failure.kind === "refused" && failure.permanent,
    });
  }
  if (message.buttons?.length && firstId !== undefined) buttons.set(message.chatId, firstId);
  return firstId === undefined ? {} : { messageId: String(firstId) };
}

/** Per chat, the message whose buttons are still up (the last one sent with buttons). */
export type ChatButtons = Map<string, number>;

/**
 * Removes the buttons of the chat's last message that has them (`OutboundMessage.closesButtons`). Best effort:
 * a message too old to edit, or already without buttons, is left as it is (a late press is answered by the core).
 */
async function closeButtons(
  api: Api,
  buttons: ChatButtons,
  chatId: string,
  signal: AbortSignal,
): Promise<void> {
  const messageId = buttons.get(chatId);
  if (messageId === undefined) return;
  buttons.delete(chatId);
  try {
    await api.editMessageReplyMarkup(
      chatId,
      messageId,
      { reply_markup: { inline_keyboard: [] } },
      grammySignal(signal),
    );
  } catch {
    // Best effort (see above).
  }
}
