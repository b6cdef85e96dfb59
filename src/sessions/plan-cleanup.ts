import { lastInteractionOf } from "./lifecycle.js";
import type { SessionEntry } from "./types.js";

/**
 * Session upkeep (`inbound.reply.session.maintenance`, docs/sessions.md): which store entries to prune and why.
 * Pure: the entries, their sizes on disk, the clock and the limits in; the plan out. `session-cleanup.ts` carries
 * it out.
 *
 * Rules, in this order:
 * 1. never pruned: the primary key, and a key in `busy` (loaded or processing in the running gateway);
 * 2. `pruneAfterDays`: every other entry whose last real exchange (`lastInteractionAt`, else `updatedAt`) is
 *    more than that many days old → "stale";
 * 3. `maxEntries`: while more entries than that remain, the oldest other one → "max-entries";
 * 4. `maxDiskMb`: while the remaining entries' files (transcript and session folder) take more than that, the
 *    oldest other one → "max-disk".
 * An entry with no usable time counts as the newest (when in doubt, keep). A key added by hand is like any other.
 * Limits the plan cannot meet (only the primary or busy entries are left) are named in `unmet`.
 */

export interface CleanupLimits {
  pruneAfterDays?: number;
  maxEntries?: number;
  maxDiskMb?: number;
}

/** One entry of the store and the bytes its files take (its transcript and its session folder). */
export interface SizedEntry {
  key: string;
  entry: SessionEntry;
  bytes: number;
}

export type PruneReason = "stale" | "max-entries" | "max-disk";

export interface PlannedPrune {
  key: string;
  sessionId: string;
  reason: PruneReason;
  /** Epoch ms of the last real exchange, or null when the entry has none. */
  lastActiveAt: number | null;
  bytes: number;
}

export interface CleanupPlan {
  /** The entries to prune, oldest first. */
  prune: PlannedPrune[];
  entries: { before: number; after: number };
  bytes: { before: number; after: number };
  /** The limits still exceeded after the plan (only entries that are never pruned are left over them). */
  unmet: ("max-entries" | "max-disk")[];
}

const DAY_MS = 24 * 60 * 60 * 1000;
const MB = 1024 * 1024;

/** The plan for `sessions` under `limits` at `now`. */
export function planCleanup(input: {
  sessions: readonly SizedEntry[];
  primaryKey: string;
  busy: ReadonlySet<string>;
  now: number;
  limits: CleanupLimits;
}): CleanupPlan {
  const { sessions, primaryKey, busy, now, limits } = input;
  const timeOf = (s: SizedEntry) => lastInteractionOf(s.entry) ?? Number.POSITIVE_INFINITY;
  // Oldest first; the key breaks ties so that the plan does not depend on the store's order.
  const candidates = sessions
    .filter((s) => s.key !== primaryKey && !busy.has(s.key))
    .sort((a, b) => timeOf(a) - timeOf(b) || (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
  const prune = new Map<string, PruneReason>();
  if (limits.pruneAfterDays !== undefined) {
    const cutoff = now - limits.pruneAfterDays * DAY_MS;
    for (const s of candidates) if (timeOf(s) < cutoff) prune.set(s.key, "stale");
  }
  const totalBytes = sessions.reduce((sum, s) => sum + s.bytes, 0);
  let count = sessions.length - prune.size;
  let bytes = totalBytes - candidates.filter((s) => prune.has(s.key)).reduce((sum, s) => sum + s.bytes, 0);
  const rest = () => candidates.filter((s) => !prune.has(s.key));
  if (limits.maxEntries !== undefined) {
    for (const s of rest()) {
      if (count <= limits.maxEntries) break;
      prune.set(s.key, "max-entries");
      count--;
      bytes -= s.bytes;
    }
  }
  if (limits.maxDiskMb !== undefined) {
    const maxBytes = limits.maxDiskMb * MB;
    for (const s of rest()) {
      if (bytes <= maxBytes) break;
      prune.set(s.key, "max-disk");
      count--;
      bytes -= s.bytes;
    }
  }
  const unmet: CleanupPlan["unmet"] = [];
  if (limits.maxEntries !== undefined && count > limits.maxEntries) unmet.push("max-entries");
  if (limits.maxDiskMb !== undefined && bytes > limits.maxDiskMb * MB) unmet.push("max-disk");
  return {
    prune: candidates
      .filter((s) => prune.has(s.key))
      .map((s) => ({
        key: s.key,
        sessionId: s.entry.sessionId,
        reason: prune.get(s.key) as PruneReason,
        lastActiveAt: lastInteractionOf(s.entry) ?? null,
        bytes: s.bytes,
      })),
    entries: { before: sessions.length, after: count },
    bytes: { before: totalBytes, after: bytes },
    unmet,
  };
}

/** Why an entry is pruned, in words: "no exchange for over 30 days", "over maxEntries 100". */
export function describeReason(reason: PruneReason, limits: CleanupLimits): string {
  switch (reason) {
    case "stale":
      return `no exchange for over ${limits.pruneAfterDays} days`;
    case "max-entries":
      return `over maxEntries ${limits.maxEntries}`;
    case "max-disk":
      return `over maxDiskMb ${limits.maxDiskMb}`;
  }
}
