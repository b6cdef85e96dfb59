import type { OutboundAttachment, Transport } from "../plugin-api/types.js";
import { splitText } from "../routing/split-text.js";

/** One send of a delivery: a piece of the text, or one file. */
export interface Part {
  text: string;
  /** The file this part carries (then `text` is empty). */
  attachment?: OutboundAttachment;
  /** Whether the part quotes the message it answers (groups): every text part, a file only when it comes first. */
  quote: boolean;
}

/**
 * The parts a reply is sent as, in order. Pure and deterministic (a restart plans the same text the same way and
 * skips the parts the journal says were delivered). Contract:
 * - the text is split by the transport's own `split`, else fence-aware at its `maxTextLength`;
 * - a transport that sends files gets each file as a part of its own after the text parts (so a failed upload is
 *   tried again alone, never with the text); an empty text then makes no part;
 * - a transport that cannot send files gets their names at the end of the text.
 */
export function planParts(
  delivery: { text: string; attachments?: readonly OutboundAttachment[] },
  transport: Transport,
): Part[] {
  const files = delivery.attachments ?? [];
  const sendsFiles = files.length > 0 && transport.capabilities.attachments === true;
  if (!sendsFiles) {
    const text = files.length > 0 ? `${delivery.text}\n\n${fileNames(files)}` : delivery.text;
    return splitFor(transport, text).map((piece) => ({ text: piece, quote: true }));
  }
  const parts: Part[] =
    delivery.text.trim() === ""
      ? []
      : splitFor(transport, delivery.text).map((piece) => ({ text: piece, quote: true }));
  const textParts = parts.length;
  files.forEach((attachment, index) => {
    parts.push({ text: "", attachment, quote: textParts === 0 && index === 0 });
  });
  return parts;
}

/** The transport's own split (when its rendering changes lengths), else the fence-aware split. */
export function splitFor(transport: Transport, text: string): string[] {
  const own = transport.split?.(text);
  if (own && own.length > 0) return own;
  return splitText(text, transport.capabilities.maxTextLength);
}

function fileNames(files: readonly OutboundAttachment[]): string {
  return files.map((a) => `[file: ${a.fileName ?? a.path}]`).join("\n");
}
