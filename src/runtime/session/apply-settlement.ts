import type { OutboundAttachment, TurnOutcome } from "../../plugin-api/types.js";
import { makeHeader } from "../../sessions/transcript.js";
import type { Delivery } from "../outbox.js";
import { syncFile } from "../tail-cache.js";
import type { WorkItem } from "../work-item.js";
import type { RuntimePort, SessionPorts } from "./ports.js";
import { SessionTranscript } from "./session-transcript.js";
import type { Settlement } from "./settlement.js";
import { type Effect, type SettleTarget, settlementEffects } from "./settlement-effects.js";
import { NotTaken } from "./taken.js";

/**
 * Carries out settlement `s`: its effects (`settlementEffects`), in order. For the ways out that are not the
 * worker's own (a command's answer, a failure outside a message's way, a joined message that was not taken).
 */
export function applySettlement(ports: SessionPorts, s: Settlement, at: SettleTarget): Promise<void> {
  return applyEffects(ports, settlementEffects(s, at, ports.queue.waiting?.(at.key) ?? 0), at);
}

/**
 * The one place that carries out a settlement's effects, in their order: appends a message's final entries
 * (`turn-failed`, a drained turn's missing results, group context), delivers (the outbox, or the local end), ends
 * the journal records of the item and of those that joined it, and resolves their outcomes. Journal records a
 * delivery completes are ended by the outbox once the chat has it (at once here for local items). The first
 * effect that throws ends the list, and its error is thrown.
 */
export async function applyEffects(ports: SessionPorts, effects: Effect[], at: SettleTarget): Promise<void> {
  const { clock, logger } = ports.runtime;
  const { journal } = ports.storage;
  const { item, key } = at;
  const turnTranscript = (): SessionTranscript => {
    if (!at.transcript) throw new Error("settlement needs the session's transcript");
    return at.transcript;
  };
  for (const effect of effects) {
    switch (effect.kind) {
      case "log":
        logger[effect.level](effect.message, effect.fields);
        break;
      case "emit-reply":
        ports.delivery.events.emit({
          type: "message",
          sessionKey: key,
          role: "assistant",
          text: effect.text,
          channel: item.message.channel,
          chatId: item.message.chatId,
          ts: clock.now(),
        });
        break;
      case "deliver": {
        const sent = deliver(ports, item, effect.text, effect.as, {
          end: effect.end,
          attachments: effect.attachments,
        });
        await (effect.bestEffort ? sent.catch(() => {}) : sent);
        break;
      }
      case "end": {
        const ended = journal.end(effect.jid, effect.status, clock.now(), effect.reason);
        await (effect.bestEffort ? ended.catch(() => {}) : ended);
        break;
      }
      case "resolve":
        effect.item.resolve(
          outcomeFor(
            ports.runtime,
            effect.item,
            effect.stopReason,
            effect.payloads,
            effect.error,
            effect.extra,
          ),
        );
        break;
      case "append": {
        const transcript =
          effect.transcript === "turn" ? turnTranscript() : await storedTranscript(ports, key);
        await transcript?.appendSettled(effect.entries);
        break;
      }
      case "sync":
        await syncFile(turnTranscript().path);
        break;
      case "retry": {
        const restored = journal.get(item.jid);
        ports.queue.retryLater(
          {
            ...item,
            attempt: effect.attempt,
            notices: [],
            resolve: () => {},
            ...(restored ? { restored } : {}),
          },
          effect.delayMs,
        );
        break;
      }
    }
  }
}

/**
 * The transcript of `key`'s current session in the store (a message that was not taken has no turn of its own);
 * undefined when it has none, or the store cannot say.
 */
async function storedTranscript(ports: SessionPorts, key: string): Promise<SessionTranscript | undefined> {
  const sessionId = (await ports.storage.store.get(key).catch(() => undefined))?.sessionId;
  if (!sessionId) return undefined;
  const header = makeHeader(sessionId, key, new Date(ports.runtime.clock.now()));
  return new SessionTranscript(ports, ports.storage.store.transcriptPath(sessionId), header);
}

/** The outcome of `item` (its notices first in the payloads). */
export function outcomeFor(
  runtime: Pick<RuntimePort, "clock">,
  item: WorkItem,
  stopReason: TurnOutcome["stopReason"],
  payloads: string[],
  error?: string,
  extra: Partial<TurnOutcome> = {},
): TurnOutcome {
  return {
    sessionKey: extra.sessionKey ?? item.sessionKey,
    sessionId: extra.sessionId ?? "",
    payloads: [...(item.notices ?? []), ...payloads].map((text) => ({ text })),
    stopReason,
    durationMs: runtime.clock.now() - item.message.receivedAt,
    ...(error ? { error } : {}),
    ...extra,
  };
}

/**
 * A note before the reply ("a new session began", a compaction): published as a `notice` event, sent to the chat,
 * and for local (API) items put in front of the reply in the outcome's payloads. Settles nothing.
 */
export async function notify(ports: SessionPorts, item: WorkItem, text: string): Promise<void> {
  ports.delivery.events.emit({
    type: "notice",
    sessionKey: item.sessionKey,
    text,
    ts: ports.runtime.clock.now(),
  });
  if (item.local) {
    item.notices ??= [];
    item.notices.push(text);
  } else {
    await deliver(ports, item, text, "notice");
  }
}

/** A line to the chat during a turn (a verbose tool notice), not kept in the outcome. Settles nothing. */
export function tell(ports: SessionPorts, item: WorkItem, text: string): Promise<void> {
  return deliver(ports, item, text, "notice");
}

/**
 * Waits until `item` is durably accepted; throws NotTaken when it was not (and marks the item refused). Every way
 * out to the person waits for this first.
 */
export async function taken(item: WorkItem): Promise<void> {
  if (!item.durable) return;
  try {
    await item.durable;
  } catch (error) {
    item.refused = true;
    throw new NotTaken(error);
  }
}

/**
 * Sends text to the chat the item came from, through the outbox. `end`: journal records that this delivery
 * completes (ended `replied` once the chat has it; at once for local items, whose reply travels in the outcome).
 * Resolves once the chat has it or it waits for its transport: never waits for a transport that is down.
 */
async function deliver(
  ports: SessionPorts,
  item: WorkItem,
  text: string,
  kind: "reply" | "notice",
  options: { end?: string[]; attachments?: OutboundAttachment[] } = {},
): Promise<void> {
  // Nothing reaches the person before the message is durably accepted.
  await taken(item);
  const end = options.end ?? [];
  if (item.local) {
    // The API's answer follows the end on disk. A reply the journal holds ended its records already.
    for (const [index, jid] of end.entries()) {
      if (ports.storage.journal.get(jid) === undefined) continue;
      await ports.storage.journal.end(
        jid,
        "replied",
        ports.runtime.clock.now(),
        index > 0 ? `answered with ${end[0]}` : undefined,
      );
    }
    return;
  }
  const m = item.message;
  const delivery: Delivery = {
    channel: m.channel,
    chatId: m.chatId,
    chatType: m.chatType,
    text,
    kind,
    replyToMessageId: m.transportMessageId ?? m.messageId,
    ...(options.attachments?.length ? { attachments: options.attachments } : {}),
    ...(end.length > 0 ? { jid: end[0]!, alsoEnd: end.slice(1) } : {}),
    ...(item.restored && end[0] === item.jid ? { deliveredParts: item.restored.delivered } : {}),
  };
  // Sent, or waiting for its transport: the session goes on either way (the outbox ends the records).
  await ports.delivery.outbox.enqueue(delivery);
}
