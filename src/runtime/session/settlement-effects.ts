import type { OutboundAttachment, TurnOutcome } from "../../plugin-api/types.js";
import type { JournalOutcome } from "../../sessions/journal-state.js";
import { interruptedNote } from "../authority/authority.js";
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
      status: JournalOutcome;
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

/** A settlement's target with its defaults filled in (see SettleTarget). */
interface Facts {
  key: string;
  item: WorkItem;
  joined: WorkItem[];
  /** The item, then those that joined it. */
  all: WorkItem[];
  ids: Partial<SessionIds>;
  alsoEnd: string[];
  attachments: OutboundAttachment[];
  othersWaiting: number;
}

/**
 * The effects of settlement `s` on `at`, in order: the one list `applyEffects` carries out. `othersWaiting`:
 * the messages waiting for the session behind the turn (logged when a drain ends it). Pure. Whatever the
 * settlement, the person is told at most once, and each record ends at most once (here, or by the outbox once
 * the chat has the delivery that names it in `end`).
 */
export function settlementEffects(s: Settlement, at: SettleTarget, othersWaiting: number): Effect[] {
  const joined = at.joined ?? [];
  const f: Facts = {
    key: at.key,
    item: at.item,
    joined,
    all: [at.item, ...joined],
    ids: at.ids ?? { sessionKey: at.key },
    alsoEnd: at.alsoEnd ?? [],
    attachments: at.attachments ?? [],
    othersWaiting,
  };
  const { item, key, ids } = f;
  switch (s.kind) {
    case "not-run":
      return [resolve(item, "aborted", [], "the gateway is stopping", { sessionKey: key })];
    case "answer":
      // Sent through the outbox, which ends the record once the chat has it (at once for local items).
      return [{ ...notice(s.text), end: [item.jid] }, resolve(item, "command", [s.text], undefined, s.extra)];
    case "context-kept":
      return [
        { kind: "append", entries: { kind: "group-context", item, at: s.at }, transcript: "turn" },
        end(item.jid, "filtered", "not addressed: kept as group context"),
        resolve(item, "filtered", [], undefined, ids),
      ];
    case "no-model":
      return [
        notice(s.text),
        unanswered([item], "no model configured", "turn"),
        end(item.jid, "failed-told", "no model configured"),
        resolve(item, "error", [s.text], "no model configured", ids),
      ];
    case "reply":
    case "quiet-reply":
      return replied(s, f);
    case "drained-resume":
    case "drained-tell":
      return drained(s, f);
    case "interrupted":
      return interrupted(s, f);
    case "stopped":
    case "failed":
      return failed(s, f);
    case "parked":
      return parked(s, f);
    case "retry":
      return [
        log("warn", "message kept after a passing failure; trying again", {
          sessionKey: item.sessionKey,
          journalId: item.jid,
          attempt: s.attempt,
          retryInMs: s.delayMs,
          error: s.why,
        }),
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
        log("warn", "a message was not taken (its journal record could not be made durable); not answered", {
          sessionKey: key,
          journalId: item.jid,
        }),
        // Its line in the transcript, if written, is marked unanswered (its retry must not read as a second
        // question).
        unanswered([item], "not taken", "stored"),
        resolve(item, "aborted", [], "the message was not taken", { sessionKey: key }),
      ];
    case "error":
      return [
        log("error", "message handling failed unexpectedly", { sessionKey: item.sessionKey, error: s.why }),
        notice(s.text, true),
        { ...end(item.jid, "failed-told", s.why), bestEffort: true },
        resolve(item, "error", [s.text], s.why, { sessionKey: item.sessionKey }),
      ];
  }
}

/**
 * A reply (the turn's, a quiet stop's text, or one a restored turn had written: synced to disk first): the
 * message event, one delivery that ends the records of the item, of those that joined it and of a resumed
 * parked turn once the chat has every part (while the transport is down it waits, records open; the reply never
 * waits for the store), then every outcome.
 */
function replied(s: Extract<Settlement, { kind: "reply" | "quiet-reply" }>, f: Facts): Effect[] {
  const extra: Partial<TurnOutcome> = {
    ...f.ids,
    ...(s.result ? { model: s.result.model } : {}),
    ...(s.result?.usage ? { usage: s.result.usage } : {}),
  };
  return [
    ...(s.result ? [] : [{ kind: "sync" } as const]),
    { kind: "emit-reply", text: s.text },
    {
      kind: "deliver",
      text: s.text,
      as: "reply",
      end: [...f.all.map((w) => w.jid), ...f.alsoEnd],
      attachments: f.attachments,
    },
    ...f.all.map((w) => resolve(w, "end", [s.text], undefined, extra)),
  ];
}

/**
 * A turn a drain ended: logged; the results of its calls that did not run (or were cut short) written before
 * anything else, so the resumed turn knows; the person told; those that joined end (they are in the turn's
 * context: the resumed turn's reply answers them with the first, and a replay takes each open record on its
 * own); the item's own record stays open.
 */
function drained(s: Extract<Settlement, { kind: "drained-resume" | "drained-tell" }>, f: Facts): Effect[] {
  const { decision } = s;
  return [
    log("info", "turn drained", {
      session: f.key,
      journalId: f.item.jid,
      action: decision.action,
      why: decision.why,
      ...(decision.results.length > 0 ? { callsWithoutResult: decision.results.length } : {}),
      othersWaiting: f.othersWaiting,
    }),
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
    ...f.joined.map((w) => end(w.jid, "replied", `joined ${f.item.jid}, which resumes`)),
    ...f.all.map((w) => resolve(w, "aborted", [s.text], `the gateway is ${s.mode}`, f.ids)),
  ];
}

/**
 * An automated turn a person's message ended after its batch: logged; its calls without a result get one; the
 * note the next turn's model sees (a `turn-interrupted` entry); every record ends `interrupted` (none is
 * resumed); the outcomes resolve `aborted` (a caller waiting on a webhook learns why). Nobody is told in chat.
 */
function interrupted(s: Extract<Settlement, { kind: "interrupted" }>, f: Facts): Effect[] {
  const why = `interrupted: ${s.by} wrote`;
  return [
    log("info", "automated turn ended after its tool batch: a person wrote", {
      session: f.key,
      journalId: f.item.jid,
      source: s.source,
      by: s.by,
      ...(s.results.length > 0 ? { callsWithoutResult: s.results.length } : {}),
    }),
    ...(s.results.length > 0
      ? [
          {
            kind: "append",
            entries: { kind: "missing-results", results: s.results },
            transcript: "turn",
          } as const,
        ]
      : []),
    {
      kind: "append",
      entries: { kind: "interrupted-note", jid: f.item.jid, note: interruptedNote(s.source) },
      transcript: "turn",
    },
    ...f.all.map((w) => end(w.jid, "interrupted", why)),
    ...f.alsoEnd.map((jid) => end(jid, "interrupted", why)),
    ...f.all.map((w) => resolve(w, "aborted", [], why, f.ids)),
  ];
}

/**
 * A turn that failed (told, its messages marked unanswered) or was stopped (nobody told: the command answers):
 * every record ends `failed-told`, a resumed parked turn's last.
 */
function failed(s: Extract<Settlement, { kind: "stopped" | "failed" }>, f: Facts): Effect[] {
  const { result } = s;
  const why = result.error ?? result.stopReason;
  const told = s.kind === "failed" ? s.text : undefined;
  const extra = { ...f.ids, model: result.model, ...(result.usage ? { usage: result.usage } : {}) };
  return [
    ...(told ? [notice(told)] : []),
    ...(s.kind === "failed" ? [unanswered(f.all, why, "turn")] : []),
    ...f.all.flatMap((w) => [
      end(w.jid, "failed-told", why),
      resolve(w, result.stopReason, told ? [told] : [], why, extra),
    ]),
    ...f.alsoEnd.map((jid) => end(jid, "failed-told", why)),
  ];
}

/**
 * A turn parked at a tool call (`open`: its record stays open for the answer), or a restored parked record an
 * answer already resumed (it ends: the answer's reply answers it). Those that joined end either way (they are in
 * the parked turn's context); the outcomes resolve `waiting`.
 */
function parked(s: Extract<Settlement, { kind: "parked" }>, f: Facts): Effect[] {
  const { item } = f;
  return [
    log("info", s.open ? "turn parked at a tool call; waiting for an answer" : "parked turn handed on", {
      session: f.key,
      journalId: item.jid,
    }),
    ...f.joined.map((w) => end(w.jid, "replied", `joined ${item.jid}, which waits for an answer`)),
    ...(s.open ? [] : [end(item.jid, "replied", "its parked batch was resumed by an answer")]),
    ...f.all.map((w) => resolve(w, "waiting", [], undefined, f.ids)),
  ];
}

function log(level: "info" | "warn" | "error", message: string, fields: Record<string, unknown>): Effect {
  return { kind: "log", level, message, fields };
}

function notice(text: string, bestEffort?: true): Extract<Effect, { kind: "deliver" }> {
  return {
    kind: "deliver",
    text,
    as: "notice",
    end: [],
    attachments: [],
    ...(bestEffort ? { bestEffort } : {}),
  };
}

function end(jid: string, status: JournalOutcome, reason: string): Extract<Effect, { kind: "end" }> {
  return { kind: "end", jid, status, reason };
}

function resolve(
  item: WorkItem,
  stopReason: TurnOutcome["stopReason"],
  payloads: string[],
  error: string | undefined,
  extra: Partial<TurnOutcome>,
): Effect {
  return { kind: "resolve", item, stopReason, payloads, ...(error ? { error } : {}), extra };
}

function unanswered(items: WorkItem[], reason: string, transcript: "turn" | "stored"): Effect {
  return { kind: "append", entries: { kind: "unanswered", items, reason }, transcript };
}
