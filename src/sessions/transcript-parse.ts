import type { CompactionEntry, TranscriptEntry, TranscriptHeader } from "./types.js";

/**
 * Parsing of single transcript lines, shared by the forward reader, the backward (resume) reader and
 * `clawdis doctor`, so that all three agree on what a good line is.
 *
 * A good header: a JSON object with `type: "session"`, a string `id` and a string `sessionKey`.
 * A good entry: a JSON object with a string `type` and a string `id`; the two types the gateway itself acts
 * on are also checked for the fields it needs (`message` needs a `message` object with a string `role`,
 * `compaction` needs string `notes`). Any other `type` is good as it is: callers ignore types they do not know.
 */
export type LineResult<T> = { ok: true; value: T } | { ok: false; reason: string };

function parseObject(text: string): LineResult<Record<string, unknown>> {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    const detail = error instanceof Error ? error.message : String(error);
    return { ok: false, reason: `not JSON (${detail})` };
  }
  if (typeof value !== "object" || value === null || Array.isArray(value)) {
    return { ok: false, reason: "not a JSON object" };
  }
  return { ok: true, value: value as Record<string, unknown> };
}

export function parseTranscriptHeader(text: string): LineResult<TranscriptHeader> {
  const parsed = parseObject(text);
  if (!parsed.ok) return parsed;
  const value = parsed.value;
  if (value.type !== "session") return { ok: false, reason: 'header: "type" is not "session"' };
  if (typeof value.id !== "string") return { ok: false, reason: 'header: "id" is not a string' };
  if (typeof value.sessionKey !== "string")
    return { ok: false, reason: 'header: "sessionKey" is not a string' };
  return { ok: true, value: value as TranscriptHeader };
}

export function parseTranscriptEntry(text: string): LineResult<TranscriptEntry> {
  const parsed = parseObject(text);
  if (!parsed.ok) return parsed;
  const value = parsed.value;
  if (typeof value.type !== "string") return { ok: false, reason: '"type" is not a string' };
  if (typeof value.id !== "string") return { ok: false, reason: '"id" is not a string' };
  if (value.type === "message") {
    const message = value.message;
    if (typeof message !== "object" || message === null || Array.isArray(message)) {
      return { ok: false, reason: 'message entry: "message" is not an object' };
    }
    if (typeof (message as Record<string, unknown>).role !== "string") {
      return { ok: false, reason: 'message entry: "message.role" is not a string' };
    }
  } else if (value.type === "compaction") {
    if (typeof value.notes !== "string")
      return { ok: false, reason: 'compaction entry: "notes" is not a string' };
  }
  return { ok: true, value: value as TranscriptEntry };
}

/** Line 1 of a transcript: a header, or (when the header was lost) possibly an ordinary entry. */
export type FirstLine =
  | { kind: "header"; header: TranscriptHeader }
  | { kind: "entry"; entry: TranscriptEntry; reason: string }
  | { kind: "bad"; reason: string };

/**
 * Classifies line 1. A line 1 that is no header but a good entry is kept as an entry (the header is then
 * missing, which `reason` says); a line 1 that is neither is a bad line.
 */
export function parseFirstLine(text: string): FirstLine {
  const header = parseTranscriptHeader(text);
  if (header.ok) return { kind: "header", header: header.value };
  const entry = parseTranscriptEntry(text);
  if (entry.ok && entry.value.type !== "session")
    return { kind: "entry", entry: entry.value, reason: header.reason };
  return { kind: "bad", reason: `bad header: ${header.reason}` };
}

export function isCompactionEntry(entry: TranscriptEntry): entry is CompactionEntry {
  return entry.type === "compaction";
}

/** A line with only whitespace is neither good nor bad: readers pass over it without counting it. */
export function isBlankLine(text: string): boolean {
  return text.trim().length === 0;
}
