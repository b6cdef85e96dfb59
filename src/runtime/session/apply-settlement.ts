import type { OutboundAttachment, TurnOutcome } from "../../plugin-api/types.js";
import { makeHeader } from "../../sessions/transcript.js";
import type { Delivery } from "../outbox.js";
import { syncFile } from "../tail-cache.js";
import type { WorkItem } from "../work-item.js";
import type { SessionIds, SessionPorts } from "./ports.js";
import { SessionTranscript } from "./session-transcript.js";
import type { Settlement } from "./settlement.js";
import { taken } from "./taken.js";
import type { TurnContext } from "./turn-context.js";

/** Where a settlement applies: the item and its session key; the rest as far as the message got. */
export type SettleTarget = Pick<TurnContext, "key" | "item"> & Partial<Omit<TurnContext, "key" | "item">>;

/**
 * Carries out a settlement: the one place that appends a message's final entries (`turn-failed`, a drained
 * turn's missing results, group context), delivers (the outbox, or the local end), ends the journal records of
 * the item and of those that joined it, and resolves their outcomes. Journal records a delivery completes are
 * ended by the outbox once the chat has it (at once here for local items).
 */
export async function applySettlement(ports: SessionPorts, s: Settlement, at: SettleTarget): Promise<void> {
  const { clock, journal, logger } = ports;
  const { item, key } = at;
  const joined = at.joined ?? [];
  const all = [item, ...joined];
  const ids: Partial<SessionIds> = at.ids ?? { sessionKey: key };
  switch (s.kind) {
    case "not-run":
      item.resolve(outcomeFor(ports, item, "aborted", [], "the gateway is stopping", { sessionKey: key }));
      return;
    case "answer": {
      let extra = s.extra;
      if (extra.sessionId === undefined) {
        const sessionId = (await ports.store.get(item.sessionKey))?.sessionId;
        if (sessionId) extra = { ...extra, sessionId };
      }
      // Sent through the outbox, which ends the record once the chat has it (at once for local items).
      await deliver(ports, item, s.text, "notice", { end: [item.jid] });
      item.resolve(outcomeFor(ports, item, "command", [s.text], undefined, extra));
      return;
    }
    case "context-kept":
      await need(at.transcript).keepAsContext(item, s.at);
      await journal.end(item.jid, "filtered", clock.now(), "not addressed: kept as group context");
      item.resolve(outcomeFor(ports, item, "filtered", [], undefined, ids));
      return;
    case "no-model":
      await deliver(ports, item, s.text, "notice");
      await need(at.transcript).markUnanswered([item], "no model configured");
      await journal.end(item.jid, "failed-told", clock.now(), "no model configured");
      item.resolve(outcomeFor(ports, item, "error", [s.text], "no model configured", ids));
      return;
    case "reply":
    case "quiet-reply": {
      // A reply found in the transcript (a restored turn's), maybe not on disk: synced before it is sent.
      if (!s.result) await syncFile(need(at.transcript).path);
      ports.events.emit({
        type: "message",
        sessionKey: key,
        role: "assistant",
        text: s.text,
        channel: item.message.channel,
        chatId: item.message.chatId,
        ts: clock.now(),
      });
      const extra: Partial<TurnOutcome> = {
        ...ids,
        ...(s.result ? { model: s.result.model } : {}),
        ...(s.result?.usage ? { usage: s.result.usage } : {}),
      };
      // The outbox ends the records of the message and of those that joined once the chat has every part; while
      // the transport is down it waits, records open. The reply never waits for the store.
      await deliver(ports, item, s.text, "reply", {
        end: [...all.map((w) => w.jid), ...(at.alsoEnd ?? [])],
        attachments: at.attachments ?? [],
      });
      for (const w of all) w.resolve(outcomeFor(ports, w, "end", [s.text], undefined, extra));
      return;
    }
    case "drained-resume":
    case "drained-tell": {
      logger.info("turn drained", {
        session: key,
        journalId: item.jid,
        action: s.decision.action,
        why: s.decision.why,
        ...(s.decision.results.length > 0 ? { callsWithoutResult: s.decision.results.length } : {}),
        othersWaiting: ports.waiting?.(key) ?? 0,
      });
      // Written before anything else: the resumed turn knows which calls did not run (or were cut short).
      await need(at.transcript).appendMissingResults(s.decision.results);
      await deliver(ports, item, s.text, "notice");
      // Messages that joined the turn are in its context: the resumed turn's reply answers them with the first
      // (a replay takes each open record on its own, so theirs end now). The item's own record stays open.
      for (const w of joined)
        await journal.end(w.jid, "replied", clock.now(), `joined ${item.jid}, which resumes`);
      for (const w of all)
        w.resolve(outcomeFor(ports, w, "aborted", [s.text], `the gateway is ${s.mode}`, ids));
      return;
    }
    case "stopped":
    case "failed": {
      const { result } = s;
      const why = result.error ?? result.stopReason;
      const told = s.kind === "failed" ? s.text : undefined;
      if (told) await deliver(ports, item, told, "notice");
      if (s.kind === "failed") await need(at.transcript).markUnanswered(all, why);
      const extra = { ...ids, model: result.model, ...(result.usage ? { usage: result.usage } : {}) };
      for (const w of all) {
        await journal.end(w.jid, "failed-told", clock.now(), why);
        w.resolve(outcomeFor(ports, w, result.stopReason, told ? [told] : [], why, extra));
      }
      for (const jid of at.alsoEnd ?? []) await journal.end(jid, "failed-told", clock.now(), why);
      return;
    }
    case "parked": {
      logger.info(s.open ? "turn parked at a tool call; waiting for an answer" : "parked turn handed on", {
        session: key,
        journalId: item.jid,
      });
      // Those that joined are in the parked turn's context: the answer's reply answers them with the first.
      for (const w of joined)
        await journal.end(w.jid, "replied", clock.now(), `joined ${item.jid}, which waits for an answer`);
      // Resumed by an answer already (a replay): the answer's reply answers it.
      if (!s.open)
        await journal.end(item.jid, "replied", clock.now(), "its parked batch was resumed by an answer");
      for (const w of all) w.resolve(outcomeFor(ports, w, "waiting", [], undefined, ids));
      return;
    }
    case "retry": {
      logger.warn("message kept after a passing failure; trying again", {
        sessionKey: item.sessionKey,
        journalId: item.jid,
        attempt: s.attempt,
        retryInMs: s.delayMs,
        error: s.why,
      });
      // Whoever waits for the outcome is told at the first failure that the message is kept.
      if (s.attempt === 1) {
        const text = `Your message is kept and will be answered once this clears: ${s.why}.`;
        item.resolve(outcomeFor(ports, item, "error", [text], s.why, { sessionKey: item.sessionKey }));
      }
      const restored = journal.get(item.jid);
      ports.retryLater(
        { ...item, attempt: s.attempt, notices: [], resolve: () => {}, ...(restored ? { restored } : {}) },
        s.delayMs,
      );
      return;
    }
    case "refused": {
      logger.warn("a message was not taken (its journal record could not be made durable); not answered", {
        sessionKey: key,
        journalId: item.jid,
      });
      // Its line in the transcript, if written, is marked unanswered (its retry must not read as a second question).
      const sessionId = (await ports.store.get(key).catch(() => undefined))?.sessionId;
      if (sessionId) {
        const header = makeHeader(sessionId, key, new Date(clock.now()));
        const transcript = new SessionTranscript(ports, ports.store.transcriptPath(sessionId), header);
        await transcript.markUnanswered([item], "not taken");
      }
      item.resolve(outcomeFor(ports, item, "aborted", [], "the message was not taken", { sessionKey: key }));
      return;
    }
    case "error":
      logger.error("message handling failed unexpectedly", { sessionKey: item.sessionKey, error: s.why });
      await deliver(ports, item, s.text, "notice").catch(() => {});
      await journal.end(item.jid, "failed-told", clock.now(), s.why).catch(() => {});
      item.resolve(outcomeFor(ports, item, "error", [s.text], s.why, { sessionKey: item.sessionKey }));
      return;
  }
}

/** The outcome of `item` (its notices first in the payloads). */
export function outcomeFor(
  ports: Pick<SessionPorts, "clock">,
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
    durationMs: ports.clock.now() - item.message.receivedAt,
    ...(error ? { error } : {}),
    ...extra,
  };
}

/**
 * A note before the reply ("a new session began", a compaction): published as a `notice` event, sent to the chat,
 * and for local (API) items put in front of the reply in the outcome's payloads. Settles nothing.
 */
export async function notify(ports: SessionPorts, item: WorkItem, text: string): Promise<void> {
  ports.events.emit({ type: "notice", sessionKey: item.sessionKey, text, ts: ports.clock.now() });
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

function need(transcript: SessionTranscript | undefined): SessionTranscript {
  if (!transcript) throw new Error("settlement needs the session's transcript");
  return transcript;
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
      if (ports.journal.get(jid) === undefined) continue;
      await ports.journal.end(
        jid,
        "replied",
        ports.clock.now(),
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
  await ports.outbox.enqueue(delivery);
}
