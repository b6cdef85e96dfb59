/**
 * How long the poller waits before the next getUpdates after `attempt` failed polls in a row (1-based). Pure.
 *
 * - `outage` (Telegram unreachable, or answering 5xx): 1 s doubling to 10 s, plus up to 25 % jitter, so polling
 *   resumes at most 12.5 s after Telegram answers again, and the outage costs at most one request every 10 s.
 * - `conflict` (409: another poller or a webhook): 1 s doubling to 60 s, plus up to 25 %: polling sooner would
 *   only end the other poller's requests, and the conflict ends when a person stops the other one.
 */
export type PollFailure = "outage" | "conflict";

const CAP_MS: Record<PollFailure, number> = { outage: 10_000, conflict: 60_000 };

export function pollRetryMs(
  failure: PollFailure,
  attempt: number,
  random: () => number = Math.random,
): number {
  const base = Math.min(CAP_MS[failure], 1000 * 2 ** Math.max(0, attempt - 1));
  return Math.round(base * (1 + 0.25 * random()));
}
