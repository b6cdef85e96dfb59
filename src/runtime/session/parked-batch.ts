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

/** How the record of a parked turn stands: its batch still `waiting`, or `handed-on` to an answer that resumed it. */
export type ParkedState = "waiting" | "handed-on";

const isParked = (e: TranscriptEntry): e is ToolParkedEntry => e.type === "tool-parked";
const asMessage = (e: TranscriptEntry): MessageEntry | undefined =>
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
