import type { OutboundAttachment, TurnOutcome } from "../../plugin-api/types.js";
import type { WorkItem } from "../work-item.js";
import type { SessionIds } from "./ports.js";
import type { SettledEntries } from "./session-transcript.js";
import type { Settlement } from "./settlement.js";
import type { TurnContext } from "./turn-context.js";

/**
 * One thing a settlement does, in the order `apply-settlement.ts` carries it out. Every effect names what it
 * touches: the session's transcript (`append`, `sync`),
 * the chat the item came from (`deliver`), the journal (`end`), whoever waits for an outcome (`resolve`), the
 * watchers (`emit-reply`), the queue (`retry`), the log (`log`).
 */
export type Effect =
  | { kind: "log"; level: "info" | "warn" | "error"; message: string; fields: Record<string, unknown> }
  /** The transcript is fsync'd (a reply found in it, maybe not on disk yet, before it is sent again). */
  | { kind: "sync" }
  /**
   * Entries appended to the turn's transcript (`turn`) or, for a message that was not taken, to the transcript of
   * its key's current session in the store, if it has one (`stored`).
   */
  | { kind: "append"; entries: SettledEntries; transcript: "turn" | "stored" }
  /** The assistant's reply as a `message` event, before it is sent. */
  | { kind: "emit-reply"; text: string }
  /**
   * `text` to the item's chat (the outbox; for a local item only its records end). `end`: the records this
   * delivery completes (the outbox ends them `replied` once the chat has it). `bestEffort`: a failure is ignored.
   */
  | {
      kind: "deliver";
      text: string;
      as: "reply" | "notice";
      end: string[];
      attachments: OutboundAttachment[];
      bestEffort?: true;
    }
  /** The journal record `jid` ends. `bestEffort`: a failure is ignored. */
  | {
      kind: "end";
      jid: string;
      status: "replied" | "failed-told" | "filtered";
      reason?: string;
      bestEffort?: true;
    }
  /** `item`'s outcome resolves (`outcomeFor`, its notices first in the payloads). */
  | {
      kind: "resolve";
      item: WorkItem;
      stopReason: TurnOutcome["stopReason"];
      payloads: string[];
      error?: string;
      extra: Partial<TurnOutcome>;
    }
  /** The item runs again after `delayMs`, its record open (`attempt`: its failures so far). */
  | { kind: "retry"; attempt: number; delayMs: number };

/** Where a settlement applies: the item and its session key; the rest as far as the message got. */
export type SettleTarget = Pick<TurnContext, "key" | "item"> & Partial<Omit<TurnContext, "key" | "item">>;

/**
 * The effects of settlement `s` on `at`, in order: the one list `applyEffects` carries out. `othersWaiting`:
 * the messages waiting for the session behind the turn (logged when a drain ends it). Pure. Whatever the
 * settlement, the person is told at most once, and each record ends at most once (here, or by the outbox once
 * the chat has the delivery that names it in `end`).
 */
export function settlementEffects(s: Settlement, at: SettleTarget, othersWaiting: number): Effect[] {
  const { item, key } = at;
  const joined = at.joined ?? [];
  const ids: Partial<SessionIds> = at.ids ?? { sessionKey: key };
  const alsoEnd = at.alsoEnd ?? [];
  const all = [item, ...joined];
  const notice = (text: string, bestEffort?: true): Extract<Effect, { kind: "deliver" }> => ({
    kind: "deliver",
    text,
    as: "notice",
    end: [],
    attachments: [],
    ...(bestEffort ? { bestEffort } : {}),
  });
  const resolve = (
    w: WorkItem,
    stopReason: TurnOutcome["stopReason"],
    payloads: string[],
    error: string | undefined,
    extra: Partial<TurnOutcome>,
  ): Effect => ({ kind: "resolve", item: w, stopReason, payloads, ...(error ? { error } : {}), extra });
  const unanswered = (items: WorkItem[], reason: string, transcript: "turn" | "stored"): Effect => ({
    kind: "append",
    entries: { kind: "unanswered", items, reason },
    transcript,
  });
  switch (s.kind) {
    case "not-run":
      return [resolve(item, "aborted", [], "the gateway is stopping", { sessionKey: key })];
    case "answer":
      // Sent through the outbox, which ends the record once the chat has it (at once for local items).
      return [{ ...notice(s.text), end: [item.jid] }, resolve(item, "command", [s.text], undefined, s.extra)];
    case "context-kept":
      return [
        { kind: "append", entries: { kind: "group-context", item, at: s.at }, transcript: "turn" },
        { kind: "end", jid: item.jid, status: "filtered", reason: "not addressed: kept as group context" },
        resolve(item, "filtered", [], undefined, ids),
      ];
    case "no-model":
      return [
        notice(s.text),
        unanswered([item], "no model configured", "turn"),
        { kind: "end", jid: item.jid, status: "failed-told", reason: "no model configured" },
        resolve(item, "error", [s.text], "no model configured", ids),
      ];
    case "reply":
    case "quiet-reply": {
      const extra: Partial<TurnOutcome> = {
        ...ids,
        ...(s.result ? { model: s.result.model } : {}),
        ...(s.result?.usage ? { usage: s.result.usage } : {}),
      };
      return [
        // A reply found in the transcript (a restored turn's), maybe not on disk: synced before it is sent.
        ...(s.result ? [] : [{ kind: "sync" } as const]),
        { kind: "emit-reply", text: s.text },
        // The outbox ends the records of the message and of those that joined once the chat has every part;
        // while the transport is down it waits, records open. The reply never waits for the store.
        {
          kind: "deliver",
          text: s.text,
          as: "reply",
          end: [...all.map((w) => w.jid), ...alsoEnd],
          attachments: at.attachments ?? [],
        },
        ...all.map((w) => resolve(w, "end", [s.text], undefined, extra)),
      ];
    }
    case "drained-resume":
    case "drained-tell": {
      const { decision } = s;
      return [
        {
          kind: "log",
          level: "info",
          message: "turn drained",
          fields: {
            session: key,
            journalId: item.jid,
            action: decision.action,
            why: decision.why,
            ...(decision.results.length > 0 ? { callsWithoutResult: decision.results.length } : {}),
            othersWaiting,
          },
        },
        // Written before anything else: the resumed turn knows which calls did not run (or were cut short).
        ...(decision.results.length > 0
          ? [
              {
                kind: "append",
                entries: { kind: "missing-results", results: decision.results },
                transcript: "turn",
              } as const,
            ]
          : []),
        notice(s.text),
        // Messages that joined the turn are in its context: the resumed turn's reply answers them with the
        // first (a replay takes each open record on its own, so theirs end now). The item's own record stays open.
        ...joined.map(
          (w): Effect => ({
            kind: "end",
            jid: w.jid,
            status: "replied",
            reason: `joined ${item.jid}, which resumes`,
          }),
        ),
        ...all.map((w) => resolve(w, "aborted", [s.text], `the gateway is ${s.mode}`, ids)),
      ];
    }
    case "stopped":
    case "failed": {
      const { result } = s;
      const why = result.error ?? result.stopReason;
      const told = s.kind === "failed" ? s.text : undefined;
      const extra = { ...ids, model: result.model, ...(result.usage ? { usage: result.usage } : {}) };
      const ended = (jid: string): Effect => ({ kind: "end", jid, status: "failed-told", reason: why });
      return [
        ...(told ? [notice(told)] : []),
        ...(s.kind === "failed" ? [unanswered(all, why, "turn")] : []),
        ...all.flatMap((w) => [ended(w.jid), resolve(w, result.stopReason, told ? [told] : [], why, extra)]),
        ...alsoEnd.map(ended),
      ];
    }
    case "parked":
      return [
        {
          kind: "log",
          level: "info",
          message: s.open ? "turn parked at a tool call; waiting for an answer" : "parked turn handed on",
          fields: { session: key, journalId: item.jid },
        },
        // Those that joined are in the parked turn's context: the answer's reply answers them with the first.
        ...joined.map(
          (w): Effect => ({
            kind: "end",
            jid: w.jid,
            status: "replied",
            reason: `joined ${item.jid}, which waits for an answer`,
          }),
        ),
        // Resumed by an answer already (a replay): the answer's reply answers it.
        ...(s.open
          ? []
          : [
              {
                kind: "end",
                jid: item.jid,
                status: "replied",
                reason: "its parked batch was resumed by an answer",
              } as const,
            ]),
        ...all.map((w) => resolve(w, "waiting", [], undefined, ids)),
      ];
    case "retry":
      return [
        {
          kind: "log",
          level: "warn",
          message: "message kept after a passing failure; trying again",
          fields: {
            sessionKey: item.sessionKey,
            journalId: item.jid,
            attempt: s.attempt,
            retryInMs: s.delayMs,
            error: s.why,
          },
        },
        // Whoever waits for the outcome is told at the first failure that the message is kept.
        ...(s.attempt === 1
          ? [
              resolve(
                item,
                "error",
                [`Your message is kept and will be answered once this clears: ${s.why}.`],
                s.why,
                { sessionKey: item.sessionKey },
              ),
            ]
          : []),
        { kind: "retry", attempt: s.attempt, delayMs: s.delayMs },
      ];
    case "refused":
      return [
        {
          kind: "log",
          level: "warn",
          message: "a message was not taken (its journal record could not be made durable); not answered",
          fields: { sessionKey: key, journalId: item.jid },
        },
        // Its line in the transcript, if written, is marked unanswered (its retry must not read as a second
        // question).
        unanswered([item], "not taken", "stored"),
        resolve(item, "aborted", [], "the message was not taken", { sessionKey: key }),
      ];
    case "error":
      return [
        {
          kind: "log",
          level: "error",
          message: "message handling failed unexpectedly",
          fields: { sessionKey: item.sessionKey, error: s.why },
        },
        notice(s.text, true),
        { kind: "end", jid: item.jid, status: "failed-told", reason: s.why, bestEffort: true },
        resolve(item, "error", [s.text], s.why, { sessionKey: item.sessionKey }),
      ];
  }
}
