import { describeError } from "../core/errors.js";
import type { SendFailure } from "../plugin-api/types.js";

/** The first retry of a failed part waits this long; each further one doubles it, up to RETRY_MAX_MS. */
export const RETRY_BASE_MS = 500;
export const RETRY_MAX_MS = 30_000;

/** What the outbox does after a send failed while its transport is up. */
export type AfterFailure =
  /** The chat refuses the message for good (SendFailure.permanent): the reply ends, with `reason`. */
  | { action: "give-up"; reason: string }
  /**
   * The failure passes: the same part is sent again after `waitMs`; tries are never counted against it.
   * `hinted`: the wait is the error's own (a rate limit's retry_after), not the backoff.
   */
  | { action: "retry"; waitMs: number; hinted: boolean };

/**
 * Decides what a failed send means. Pure. Contract: only an error marked `permanent: true` by its transport
 * (plugin-api SendFailure) gives a reply up; anything else (5xx, 429, a network error, an unclassified throw) is
 * retried without limit, after the error's `retryAfterMs` when it has one, else after `backoffMs(attempt)`.
 * @param attempt the tries of this part so far that failed (1 for the first failure)
 */
export function afterSendFailure(error: unknown, attempt: number): AfterFailure {
  const failure = (typeof error === "object" && error !== null ? error : {}) as SendFailure;
  if (failure.permanent === true) return { action: "give-up", reason: describeError(error) };
  const hinted = failure.retryAfterMs;
  if (typeof hinted === "number" && Number.isFinite(hinted) && hinted >= 0) {
    return { action: "retry", waitMs: hinted, hinted: true };
  }
  return { action: "retry", waitMs: backoffMs(attempt), hinted: false };
}

/** 0.5 s doubling to 30 s, by failures in a row (1-based). */
export function backoffMs(attempt: number): number {
  return Math.min(RETRY_MAX_MS, RETRY_BASE_MS * 2 ** Math.min(30, Math.max(0, attempt - 1)));
}

/** Whether the retry after failure number `attempt` is logged: the first three, then every tenth. */
export function logsRetry(attempt: number): boolean {
  return attempt <= 3 || attempt % 10 === 0;
}
