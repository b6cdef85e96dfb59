import type { Logger } from "../core/logger.js";
import { pathExists } from "../core/path-exists.js";
import { decideSession, freshEntry } from "../sessions/lifecycle.js";
import { isValidSessionId, newSessionId } from "../sessions/session-id.js";
import type { SessionStore } from "../sessions/store.js";
import { readTranscriptForResume } from "../sessions/transcript.js";
import type { MessageEntry } from "../sessions/types.js";

/** How far a message left open by the previous run got (see `restoredProgress`). */
export interface RestoredProgress {
  sessionId: string;
  userStored: boolean;
  /** The final reply, when it reached the transcript. */
  reply?: string;
}

/**
 * How far a message left open by the previous run got, read from the key's current transcript (entries carry
 * `meta.journalId`): whether the person's message is stored, and the final reply if it was written.
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
  if (!userStored) return undefined;
  return { sessionId: entry.sessionId, userStored, ...(reply !== undefined ? { reply } : {}) };
}

/** Continues the key's session, or starts a new sessionId (first message, reset, idle, deleted transcript). */
export async function chooseSession(
  deps: { store: SessionStore; logger: Logger; idleMinutes: number },
  key: string,
  reset: boolean,
  now: number,
): Promise<{ sessionId: string; notice?: string }> {
  const { store, logger, idleMinutes } = deps;
  let entry = await store.get(key);
  if (entry && !isValidSessionId(entry.sessionId)) {
    logger.error("the sessionId in sessions.json is not a safe file name; starting a new session", {
      sessionKey: key,
      sessionId: JSON.stringify(entry.sessionId),
    });
    entry = { ...entry, sessionId: "" };
  }
  const transcriptExists = entry?.sessionId ? await pathExists(store.transcriptPath(entry.sessionId)) : false;
  const decision = decideSession({ entry, transcriptExists, now, idleMinutes, reset });
  if (decision.action === "continue") return { sessionId: decision.sessionId };
  const sessionId = newSessionId();
  await store.update(key, (previous) => freshEntry(previous, sessionId, now));
  logger.info("new session", { sessionKey: key, sessionId, reason: decision.reason });
  if (decision.reason === "idle") {
    return {
      sessionId,
      notice: `(A new session began: nothing was said here for over ${idleMinutes} minutes.)`,
    };
  }
  return { sessionId };
}
