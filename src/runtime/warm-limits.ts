/**
 * How much warm state all sessions together may hold, whatever the number of sessions and however long
 * `passivateAfterMinutes` is: memory and open files stay bounded. Pure decisions; the registry
 * (`session-registry.ts`) applies them after each piece of work.
 *
 * Contract: the least recently used sessions give up their warm state first (a tail is read from disk again, a
 * transcript opened again, at their next turn: nothing is lost); a busy session (a running turn, queued work)
 * keeps what it holds, even past a limit.
 */

/**
 * How many session transcripts may be held open to append to: one per chat in use. A quarter of the process's
 * limit on open files (the rest is for sockets, the journal, the store, tools; Node raises the soft limit to the
 * hard one at start), within [MIN_OPEN_TRANSCRIPTS, MAX_OPEN_TRANSCRIPTS]; FALLBACK_OPEN_TRANSCRIPTS where the
 * limit cannot be read. A descriptor costs the kernel about a kilobyte. Past the limit each turn of a session
 * beyond it opens its transcript and closes another's: with 64, 100 group chats in use took 13 % more CPU per
 * message; with 256, 1,000 chats in use waited ~60 µs longer for the model request (p50 0.43 -> 0.49 ms: 1,024
 * against 256; docs/benchmarks.md).
 */
export const MAX_OPEN_TRANSCRIPTS = 4096;
export const MIN_OPEN_TRANSCRIPTS = 16;
export const FALLBACK_OPEN_TRANSCRIPTS = 256;
/**
 * The warm tails of all sessions together stand for at most this many transcript bytes (about 2-3x in memory):
 * 100 chats in use with ~160 KB of transcript each. At 8 MB, 100 group chats past ~80 KB each read their tail from
 * disk again at almost every turn (docs/benchmarks.md). Sessions touched once hold no tail (`admitsTail`).
 */
export const MAX_WARM_TAIL_BYTES = 16 * 1024 * 1024;

export interface WarmLimits {
  openTranscripts: number;
  tailBytes: number;
}

/** The open-transcript limit for a process that may hold `openFiles` descriptors (undefined: unknown). Pure. */
export function openTranscriptsFor(openFiles: number | undefined): number {
  if (openFiles === undefined || !(openFiles > 0)) return FALLBACK_OPEN_TRANSCRIPTS;
  return Math.min(MAX_OPEN_TRANSCRIPTS, Math.max(MIN_OPEN_TRANSCRIPTS, Math.floor(openFiles / 4)));
}

/** The limits of a process that may hold `openFiles` descriptors. Pure. */
export function warmLimitsFor(openFiles: number | undefined): WarmLimits {
  return { openTranscripts: openTranscriptsFor(openFiles), tailBytes: MAX_WARM_TAIL_BYTES };
}

/** What one session holds, as the limits count it. */
export interface Holding {
  key: string;
  tailBytes: number;
  writer: boolean;
}

/** What to give up: a session's tail, its open transcript, or both. */
export interface Release {
  key: string;
  tail: boolean;
  writer: boolean;
}

/**
 * Which holdings to release so that both limits hold: walks `holdings` from the least recently used on, passing
 * over busy sessions, and stops as soon as the totals are within `limits`. Pure.
 */
export function pickReleases(
  holdings: Iterable<Holding>,
  totals: WarmLimits,
  limits: WarmLimits,
  busy: (key: string) => boolean,
): Release[] {
  let { openTranscripts, tailBytes } = totals;
  const releases: Release[] = [];
  for (const holding of holdings) {
    if (openTranscripts <= limits.openTranscripts && tailBytes <= limits.tailBytes) break;
    if (busy(holding.key)) continue;
    const writer = holding.writer && openTranscripts > limits.openTranscripts;
    const tail = holding.tailBytes > 0 && tailBytes > limits.tailBytes;
    if (!writer && !tail) continue;
    if (writer) openTranscripts--;
    if (tail) tailBytes -= holding.tailBytes;
    releases.push({ key: holding.key, tail, writer });
  }
  return releases;
}
