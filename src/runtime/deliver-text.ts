import type { Clock } from "../core/clock.js";
import type { Logger } from "../core/logger.js";
import type { Transport } from "../plugin-api/types.js";
import { splitText } from "../routing/split-text.js";
import type { Journal } from "../sessions/journal.js";
import type { WorkItem } from "./work-item.js";

/** How long one send may take before it is aborted. */
const SEND_TIMEOUT_MS = 30_000;

export interface DeliveryDeps {
  transport(channel: string): Transport | undefined;
  journal: Journal;
  clock: Clock;
  logger: Logger;
}

/**
 * Sends text to the chat the item came from, split to the transport's limit. With `journalParts`, each part
 * delivered is recorded and a restart skips it. Local (API) items get their reply through the outcome instead.
 */
export async function deliverText(
  deps: DeliveryDeps,
  item: WorkItem,
  text: string,
  kind: "reply" | "notice",
  journalParts = false,
): Promise<void> {
  if (item.local) return;
  const transport = deps.transport(item.message.channel);
  if (!transport) {
    deps.logger.warn("no running transport to deliver to; the reply is in the transcript", {
      channel: item.message.channel,
      chatId: item.message.chatId,
    });
    return;
  }
  const parts = splitText(text, transport.capabilities.maxTextLength);
  // A single part needs no record of its own: the journal's `end` follows it.
  const recordParts = journalParts && parts.length > 1;
  for (const [index, part] of parts.entries()) {
    if (recordParts && item.restored?.delivered.includes(index)) continue;
    await transport.send(
      {
        channel: item.message.channel,
        chatId: item.message.chatId,
        text: part,
        replyToMessageId: item.message.messageId,
        kind,
      },
      AbortSignal.timeout(SEND_TIMEOUT_MS),
    );
    if (recordParts) await deps.journal.markDelivered(item.jid, index, deps.clock.now());
  }
}
