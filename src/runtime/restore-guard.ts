import { type LoopGuardState, parseLoopGuard } from "../agent/loop-guard.js";
import type { CompactionEntry, TranscriptEntry } from "../sessions/types.js";

/**
 * The loop guard's state to go on from when the turn of journal record `journalId` runs again (a restart, a
 * retry after a passing failure): the newest `loop-guard` entry of that turn after the newest compaction, else
 * the state that compaction saved when it happened in that turn. Undefined: a new guard. Pure.
 */
export function restoreGuard(
  compaction: CompactionEntry | undefined,
  entries: TranscriptEntry[],
  journalId: string,
): LoopGuardState | undefined {
  for (let i = entries.length - 1; i >= 0; i--) {
    const entry = entries[i] as TranscriptEntry & { journalId?: unknown; state?: unknown };
    if (entry.type === "loop-guard" && entry.journalId === journalId) return parseLoopGuard(entry.state);
  }
  const saved = compaction as (CompactionEntry & { journalId?: unknown; loopGuard?: unknown }) | undefined;
  if (saved && saved.journalId === journalId) return parseLoopGuard(saved.loopGuard);
  return undefined;
}
