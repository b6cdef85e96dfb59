import type { Gateway } from "../gateway.js";
import type { TurnOutcome } from "../plugin-api/types.js";
import { readTranscriptPage } from "../sessions/transcript-page.js";
import type { StoredChatMessage, TranscriptEntry } from "../sessions/types.js";

/**
 * The answer of a request that ran before this gateway started (its `Idempotency-Key` is in the journal's dedupe
 * keys, not in memory): read back from the session's current transcript, where the message is the `user` entry of
 * channel `openai` with that message id, and its reply the assistant entries of its journal record.
 */

/** A reply found in the transcript: its journal record, when its message was stored, and the turn's outcome. */
export interface RecoveredAnswer {
  journalId: string;
  /** Epoch ms of the message's entry. */
  at: number;
  outcome: TurnOutcome;
}

/** How many pages (each at most 8 MiB) of the transcript are read back looking for the message. */
const MAX_PAGES = 4;

interface EntryMeta {
  channel?: unknown;
  messageId?: unknown;
  journalId?: unknown;
  model?: unknown;
  usage?: TurnOutcome["usage"];
}

const metaOf = (entry: TranscriptEntry): EntryMeta => (entry as { meta?: EntryMeta }).meta ?? {};
const messageOf = (entry: TranscriptEntry): StoredChatMessage | undefined =>
  entry.type === "message" ? (entry as { message?: StoredChatMessage }).message : undefined;

/**
 * What the entries (oldest first) say of message `messageId` of channel `openai`: its answer; `running` when the
 * message is there but neither its reply nor its failure (a turn run again after the restart); undefined when the
 * message is not there (a reset since: it is in an older transcript). Pure. The reply is the last assistant text
 * of its record; the usage is summed over the record's model calls.
 */
export function answerFromEntries(
  entries: readonly TranscriptEntry[],
  messageId: string,
  where: { sessionKey: string; sessionId: string },
): RecoveredAnswer | "running" | undefined {
  const start = entries.findIndex(
    (e) =>
      messageOf(e)?.role === "user" && metaOf(e).channel === "openai" && metaOf(e).messageId === messageId,
  );
  if (start === -1) return undefined;
  const first = entries[start] as TranscriptEntry;
  const journalId = metaOf(first).journalId;
  if (typeof journalId !== "string") return undefined;
  const at = Date.parse(first.ts);
  let text: string | undefined;
  let model: string | undefined;
  let failed: string | undefined;
  const usage = { promptTokens: 0, completionTokens: 0, totalTokens: 0 };
  for (const entry of entries.slice(start + 1)) {
    const meta = metaOf(entry);
    if (entry.type === "turn-failed" && (entry as { journalId?: unknown }).journalId === journalId) {
      const reason = (entry as { reason?: unknown }).reason;
      failed = typeof reason === "string" && reason !== "" ? reason : "the turn failed";
    }
    const message = messageOf(entry);
    if (message?.role !== "assistant" || meta.journalId !== journalId) continue;
    usage.promptTokens += meta.usage?.promptTokens ?? 0;
    usage.completionTokens += meta.usage?.completionTokens ?? 0;
    usage.totalTokens += meta.usage?.totalTokens ?? 0;
    if (typeof meta.model === "string") model = meta.model;
    if (typeof message.content === "string" && message.content !== "" && !message.tool_calls?.length)
      text = message.content;
  }
  if (text === undefined && failed === undefined) return "running";
  const outcome: TurnOutcome = {
    ...where,
    payloads: text === undefined ? [] : [{ text }],
    stopReason: text === undefined ? "error" : "end",
    usage,
    durationMs: 0,
    ...(model !== undefined ? { model } : {}),
    ...(text === undefined ? { error: failed } : {}),
  };
  return { journalId, at: Number.isFinite(at) ? at : 0, outcome };
}

/** Reads session `sessionKey`'s current transcript backwards (at most MAX_PAGES pages) for `messageId`'s answer. */
export async function recoverAnswer(
  gateway: Gateway,
  sessionKey: string,
  messageId: string,
): Promise<RecoveredAnswer | "running" | undefined> {
  const entry = await gateway.store.get(sessionKey);
  if (!entry) return undefined;
  const path = gateway.store.transcriptPath(entry.sessionId);
  const where = { sessionKey, sessionId: entry.sessionId };
  let entries: TranscriptEntry[] = [];
  let before: number | undefined;
  for (let page = 0; page < MAX_PAGES; page++) {
    const read = await readTranscriptPage(path, {
      limit: 100_000,
      keep: (e) => e.type === "message" || e.type === "turn-failed",
      ...(before !== undefined ? { before } : {}),
    });
    entries = [...read.entries, ...entries];
    const found = answerFromEntries(entries, messageId, where);
    if (found !== undefined || read.before === undefined) return found;
    before = read.before;
  }
  return undefined;
}
