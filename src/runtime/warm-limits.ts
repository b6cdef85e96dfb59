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
 * At most this many session transcripts are held open to append to: one per chat in use, for 256 chats at once (a
 * descriptor costs the kernel about a kilobyte, and Node raises the soft limit on open files to the hard one at
 * start). Past it, each turn of a session beyond the limit opens its transcript and closes another's: with 64,
 * 100 group chats in use took 13 % more CPU per message (measured with the throughput part of `npm run bench --
 * gateway`; docs/benchmarks.md).
 */
export const MAX_OPEN_TRANSCRIPTS = 256;
/** The warm tails of all sessions together stand for at most this many transcript bytes (about 2-3x in memory). */
export const MAX_WARM_TAIL_BYTES = 8 * 1024 * 1024;

export interface WarmLimits {
  openTranscripts: number;
  tailBytes: number;
}

export const DEFAULT_WARM_LIMITS: WarmLimits = {
  openTranscripts: MAX_OPEN_TRANSCRIPTS,
  tailBytes: MAX_WARM_TAIL_BYTES,
};

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
