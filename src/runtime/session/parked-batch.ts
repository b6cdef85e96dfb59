import type { MessageEntry, StoredToolCall, ToolParkedEntry, TranscriptEntry } from "../../sessions/types.js";

/**
 * A batch a gate parked (a `tool-parked` entry, `TurnResult.parked`), as the transcript holds it: the record that
 * waits (`journalId`), why, and its calls that have no result yet (`waiting`, in order).
 */
export interface ParkedBatch {
  journalId?: string;
  reason: string;
  waiting: StoredToolCall[];
}

export const isParked = (e: TranscriptEntry): e is ToolParkedEntry => e.type === "tool-parked";
export const asMessage = (e: TranscriptEntry): MessageEntry | undefined =>
  e.type === "message" ? (e as MessageEntry) : undefined;

/**
 * The newest parked batch not yet followed by a final answer (an answer that resumed it ends with one), with its
 * calls that have no result yet; undefined when none waits. Pure.
 */
export function openParked(entries: readonly TranscriptEntry[]): ParkedBatch | undefined {
  const at = entries.findLastIndex(isParked);
  if (at === -1) return undefined;
  const parked = entries[at] as ToolParkedEntry;
  const after = entries.slice(at + 1).flatMap((e) => asMessage(e) ?? []);
  if (after.some((m) => m.meta?.final === true)) return undefined;
  const answered = new Set(after.flatMap((m) => (m.message.role === "tool" ? [m.message.tool_call_id] : [])));
  const calls = entries
    .slice(0, at)
    .flatMap((e) => asMessage(e)?.message.tool_calls ?? [])
    .filter((c) => parked.callIds.includes(c.id));
  return {
    ...(parked.journalId !== undefined ? { journalId: parked.journalId } : {}),
    reason: parked.reason,
    waiting: calls.filter((c) => !answered.has(c.id)),
  };
}
