import { basename } from "node:path";
import type { AnyMessageContent, MiscMessageGenerationOptions, WAMessage } from "@whiskeysockets/baileys";
import type {
  OutboundAttachment,
  OutboundMessage,
  SendFailure,
  SendResult,
} from "../../src/plugin-api/index.js";

/**
 * One outbound part to WhatsApp: the text (already formatted and split by `split`), and on the last part of a
 * reply its files (images as images, audio as audio, everything else as a document, the first file carrying no
 * caption of its own gets none). Contract:
 * - the message id is chosen before sending and recorded through `remember`, so the transport recognises its
 *   own message when WhatsApp shows it again (the self-chat) and never takes it as input;
 * - in groups the reply quotes the message it answers (when it is still in `quotable`);
 * - `signal` is honoured: an aborted send rejects at once with the signal's reason (Baileys' `sendMessage` takes
 *   no signal; its late result is ignored);
 * - a failure rejects with what WhatsApp said ("WhatsApp did not take the message (428: Connection Closed)"),
 *   marked `permanent` when the chat refuses it for good (describeSendError);
 * - the core's outbox hands each file in as a part of its own, so a failed upload is retried without the text.
 */

/** What sending needs of a Baileys socket. */
export interface WhatsappSender {
  sendMessage(
    jid: string,
    content: AnyMessageContent,
    options?: MiscMessageGenerationOptions,
  ): Promise<WAMessage | undefined>;
}

export interface SendDeps {
  sender: WhatsappSender;
  /** A fresh WhatsApp message id. */
  newMessageId(): string;
  /** Records an id this transport is about to send. */
  remember(id: string): void;
  /** The inbound message to quote, by its id, if still known. */
  quotable(id: string): WAMessage | undefined;
}

export async function sendWhatsapp(
  deps: SendDeps,
  message: OutboundMessage,
  signal: AbortSignal,
): Promise<SendResult> {
  const quoted =
    message.chatType === "group" && message.replyToMessageId
      ? deps.quotable(message.replyToMessageId)
      : undefined;
  const contents: AnyMessageContent[] = [];
  if (message.text.trim() !== "") contents.push({ text: message.text });
  for (const attachment of message.attachments ?? []) contents.push(attachmentContent(attachment));
  let first: string | undefined;
  for (const content of contents) {
    signal.throwIfAborted();
    const messageId = deps.newMessageId();
    deps.remember(messageId);
    const options: MiscMessageGenerationOptions = {
      messageId,
      ...(quoted && first === undefined ? { quoted } : {}),
    };
    await abortable(deps.sender.sendMessage(message.chatId, content, options), signal);
    first ??= messageId;
  }
  return first ? { messageId: first } : {};
}

function attachmentContent(file: OutboundAttachment): AnyMessageContent {
  const source = { url: file.path };
  const caption = file.caption ? { caption: file.caption } : {};
  const mimetype = file.mimeType;
  switch (file.kind) {
    case "image":
      return { image: source, ...caption, ...(mimetype ? { mimetype } : {}) };
    case "audio":
    case "voice":
      return { audio: source, mimetype: mimetype ?? "audio/mpeg", ptt: file.kind === "voice" };
    case "video":
      return { video: source, ...caption, ...(mimetype ? { mimetype } : {}) };
    default:
      return {
        document: source,
        mimetype: mimetype ?? "application/octet-stream",
        fileName: file.fileName ?? basename(file.path),
        ...caption,
      };
  }
}

/** Resolves or rejects with `work`, unless `signal` aborts first. */
function abortable<T>(work: Promise<T>, signal: AbortSignal): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(signal.reason);
    signal.addEventListener("abort", onAbort, { once: true });
    work.then(
      (value) => {
        signal.removeEventListener("abort", onAbort);
        resolve(value);
      },
      (error: unknown) => {
        signal.removeEventListener("abort", onAbort);
        reject(describeSendError(error));
      },
    );
  });
}

/**
 * Status codes of a send WhatsApp refuses for good (plugin-api SendFailure `permanent`): a bad request (400), not
 * allowed in that chat (403: removed from the group, blocked), no such chat (404), not acceptable (406). Anything
 * else (408 timed out, 428 connection closed, 429, 5xx, a network error) passes and the outbox tries again.
 */
const PERMANENT_STATUS = new Set([400, 403, 404, 406]);

/** An error whose message says what WhatsApp said, marked as plugin-api SendFailure (`permanent`, `retryAfterMs`). */
export function describeSendError(error: unknown): Error {
  const boom = error as { output?: { statusCode?: number }; message?: string; data?: unknown };
  const status = boom.output?.statusCode;
  const detail = boom.message ?? String(error);
  const described = new Error(`WhatsApp did not take the message (${status ? `${status}: ` : ""}${detail})`, {
    cause: error,
  });
  if (status === 429) Object.assign(described, { retryAfterMs: 5_000 } satisfies SendFailure);
  if (status !== undefined && PERMANENT_STATUS.has(status))
    Object.assign(described, { permanent: true } satisfies SendFailure);
  return described;
}
