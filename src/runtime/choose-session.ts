import { existsSync } from "node:fs";
import type { ClawdisConfig } from "../core/config.js";
import type { Logger } from "../core/logger.js";
import { effectiveTimeZone } from "../core/time-zone.js";
import { type DailyReset, decideSession, type FreshReason, freshEntry } from "../sessions/lifecycle.js";
import { isValidSessionId, newSessionId } from "../sessions/session-id.js";
import type { SessionStore } from "../sessions/store.js";
import { readTranscriptForResume } from "../sessions/transcript.js";
import type { MessageEntry, SessionEntry, ToolParkedEntry, TranscriptEntry } from "../sessions/types.js";
import { asMessage, isParked } from "./session/parked-batch.js";

/** How the record of a parked turn stands: its batch still `waiting`, or `handed-on` to an answer that resumed it. */
export type ParkedState = "waiting" | "handed-on";

/** How far a message left open by the previous run got (see `restoredProgress`). */
export interface RestoredProgress {
  sessionId: string;
  userStored: boolean;
  /** The final reply, when it reached the transcript. */
  reply?: string;
  /** Its turn parked at a tool call (`parked-batch.ts`): still waiting, or handed on to the answer. */
  parked?: ParkedState;
}

/**
 * How far a message left open by the previous run got, read from the key's current transcript (entries carry
 * `meta.journalId`): whether the person's message is stored, the final reply if it was written, and whether its
 * turn parked.
 * Undefined when the transcript holds nothing of it: the message is then handled afresh.
 */
export async function restoredProgress(
  store: SessionStore,
  key: string,
  jid: string,
): Promise<RestoredProgress | undefined> {
  const entry = await store.get(key);
  if (!entry || !isValidSessionId(entry.sessionId)) return undefined;
  const resume = await readTranscriptForResume(store.transcriptPath(entry.sessionId));
  let userStored = false;
  let reply: string | undefined;
  for (const e of resume.entries) {
    if (e.type !== "message") continue;
    const m = e as MessageEntry;
    if (m.meta?.journalId !== jid) continue;
    if (m.message.role === "user") userStored = true;
    if (m.message.role === "assistant" && !m.message.tool_calls?.length && m.meta?.final)
      reply = m.message.content ?? "";
  }
  // An answer that resumed a parked batch stores no message of its own: its reply alone says how far it got.
  if (!userStored && reply === undefined) return undefined;
  const parked = userStored ? parkedState(resume.entries, jid) : undefined;
  return {
    sessionId: entry.sessionId,
    userStored,
    ...(reply !== undefined ? { reply } : {}),
    ...(parked ? { parked } : {}),
  };
}

/**
 * How the record `jid` stands if its turn parked: `waiting` while nothing follows its `tool-parked` entry but
 * entries that are neither a result of its calls nor a final answer; `handed-on` once an answer resumed it.
 * Undefined when its turn did not park. Pure.
 */
export function parkedState(entries: readonly TranscriptEntry[], jid: string): ParkedState | undefined {
  const at = entries.findLastIndex((e) => isParked(e) && e.journalId === jid);
  if (at === -1) return undefined;
  const parked = entries[at] as ToolParkedEntry;
  const resumed = entries
    .slice(at + 1)
    .flatMap((e) => asMessage(e) ?? [])
    .some(
      (m) =>
        m.meta?.final === true ||
        (m.message.role === "tool" && parked.callIds.includes(m.message.tool_call_id ?? "")),
    );
  return resumed ? "handed-on" : "waiting";
}

/** Raised inside a store update when the key's entry is no longer the one the decision was made on. */
class EntryChanged extends Error {}

/** How often the decision is made again because the key's entry changed between the read and the update. */
const MAX_DECISIONS = 3;

/**
 * Continues the key's session, or starts a new sessionId (first message, reset, idle, deleted transcript).
 * The decision is made on a read without the lock; the new entry is written only if the key still holds what
 * was decided on (else the decision is made again on what is there now, up to MAX_DECISIONS times), so a key
 * changed meanwhile by another process or a hand edit is not replaced by mistake. An entry whose sessionId the
 * store refused is replaced by one with a new id that keeps all its other fields. `entry` is the key's entry as
 * the decision left it (read-only: the store's own object when the session continues), so the turn need not read
 * the store again for its settings. `started`: why a new sessionId was started (absent when the session goes on).
 */
export async function chooseSession(
  deps: { store: SessionStore; logger: Logger; idleMinutes: number; daily?: DailyReset },
  key: string,
  reset: boolean,
  now: number,
): Promise<{ sessionId: string; notice?: string; entry?: SessionEntry; started?: FreshReason }> {
  const { store, logger, idleMinutes, daily } = deps;
  for (let round = 1; ; round++) {
    // With this process's updates not written yet (the last turn's bookkeeping is written behind): the decision
    // counts idle time from the last turn, and the turn reads its settings and context size from it.
    const entry = await store.getWithUpdates(key);
    // Synchronous: one lookup of a path the kernel has cached, cheaper than a trip through the threadpool (which
    // the fsyncs of other turns may keep busy); every message makes it.
    const transcriptExists = entry ? existsSync(store.transcriptPath(entry.sessionId)) : false;
    const decision = decideSession({
      entry,
      transcriptExists,
      now,
      idleMinutes,
      reset,
      ...(daily ? { daily } : {}),
    });
    if (decision.action === "continue") return { sessionId: decision.sessionId, ...(entry ? { entry } : {}) };
    const sessionId = newSessionId();
    let refused: { sessionId: unknown } | undefined;
    let stored: SessionEntry | undefined;
    try {
      stored = await store.update(key, (current, unusable) => {
        if (round < MAX_DECISIONS && current?.sessionId !== entry?.sessionId) throw new EntryChanged();
        refused = current === undefined && unusable ? { sessionId: unusable.sessionId } : undefined;
        return freshEntry(current ?? unusable, sessionId, now);
      });
    } catch (error) {
      if (error instanceof EntryChanged) continue;
      throw error;
    }
    if (refused !== undefined) {
      logger.warn("the sessionId in sessions.json is not a safe file name; replaced it with a new one", {
        sessionKey: key,
        refusedSessionId: JSON.stringify(refused.sessionId) ?? "missing",
        sessionId,
      });
    }
    logger.info("new session", { sessionKey: key, sessionId, reason: decision.reason });
    const chosen = { sessionId, started: decision.reason, ...(stored ? { entry: stored } : {}) };
    if (decision.reason === "idle") {
      return {
        ...chosen,
        notice: idleNotice(idleMinutes),
      };
    }
    if (decision.reason === "daily" && daily) return { ...chosen, notice: dailyNotice(daily.at) };
    return chosen;
  }
}

/** The one-line note that opens a session begun because the daily reset hour passed. */
export function dailyNotice(at: string): string {
  return `(A new session began: the daily reset at ${at} passed since the last message.)`;
}

/** The one-line note that opens a session begun because the last one was idle: "over 1 minute", "over 5 minutes". */
export function idleNotice(idleMinutes: number): string {
  const minutes = `${idleMinutes} ${idleMinutes === 1 ? "minute" : "minutes"}`;
  return `(A new session began: nothing was said here for over ${minutes}.)`;
}

/** The daily reset the config asks for (`dailyResetAt` in `gateway.timeZone`), as `chooseSession`'s deps take it. */
export function dailyResetOf(config: ClawdisConfig): { daily?: DailyReset } {
  const at = config.inbound.reply.session.dailyResetAt;
  return at ? { daily: { at, timeZone: effectiveTimeZone(config.gateway.timeZone) } } : {};
}
