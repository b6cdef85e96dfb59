import type { SdkErrors } from "./llm-errors.js";
/**
 * When the chat request to the model is tried again, and after how long: the openai SDK's rule (6.49.0,
 * `shouldRetry`, `retryRequest` and `calculateDefaultRetryTimeoutMillis` in its client), kept as it is so that
 * sending the request ourselves (llm-client.ts) changes nothing a server or a person sees.
 */

/**
 * Whether an answer that is not a success is worth another try: the server's own `x-should-retry: true|false`
 * decides when it is sent; otherwise 408 (request timeout), 409 (lock timeout), 429 (rate limit) and every 5xx.
 */
export function shouldRetryAnswer(status: number, headers: Headers): boolean {
  const said = headers.get("x-should-retry");
  if (said === "true") return true;
  if (said === "false") return false;
  return status === 408 || status === 409 || status === 429 || status >= 500;
}

/**
 * The wait before a retry, in ms. `retried` is how many retries came before this one (0 for the first).
 * - `retry-after-ms` (a number of milliseconds), else `retry-after` (seconds, or an HTTP date), when the failed
 *   answer sent one (`headers`; none after a connection error); a date already past waits 0;
 * - else 0.5 s doubling with each retry, at most 8 s, less up to a quarter at random (`random` in [0, 1)).
 *
 * The wait is the server's even when long: the caller's signal (the watchdogs, the drain) ends it.
 */
export function retryDelayMs(
  headers: Headers | undefined,
  retried: number,
  now: number = Date.now(),
  random: number = Math.random(),
): number {
  let wait: number | undefined;
  const ms = headers?.get("retry-after-ms");
  if (ms) {
    const parsed = Number.parseFloat(ms);
    if (!Number.isNaN(parsed)) wait = parsed;
  }
  const after = headers?.get("retry-after");
  if (after && !wait) {
    const seconds = Number.parseFloat(after);
    wait = Number.isNaN(seconds) ? Date.parse(after) - now : seconds * 1000;
  }
  if (wait === undefined) {
    const seconds = Math.min(0.5 * 2 ** retried, 8);
    wait = seconds * (1 - random * 0.25) * 1000;
  }
  return Number.isFinite(wait) && wait > 0 ? wait : 0;
}

/**
 * Whether a request the SDK made (`GET /models`) and that failed with `error` is worth another try by the rule
 * above (a connection that failed, or a retryable status), with the headers its wait is read from; undefined
 * when not.
 */
export function retryOfError(error: unknown, sdk: SdkErrors): { headers: Headers | undefined } | undefined {
  if (error instanceof sdk.APIConnectionError) return { headers: undefined };
  if (error instanceof sdk.APIError && typeof error.status === "number" && error.headers instanceof Headers)
    return shouldRetryAnswer(error.status, error.headers) ? { headers: error.headers } : undefined;
  return undefined;
}
