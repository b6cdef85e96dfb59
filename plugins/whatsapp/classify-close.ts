/**
 * What to do when the WhatsApp socket closes, by the close's status code (Baileys' `DisconnectReason`). Pure: the
 * caller owns the socket, the timer and the randomness.
 *
 * - transient (408 lost/timed out, 428 closed, 500 bad session, 503 unavailable, 515 restart required, a network
 *   error without a code, and any code not listed here): reconnect after a capped, jittered backoff, as often as
 *   it takes (a phone that is off for a day comes back). 515 is asked for by WhatsApp right after pairing: at once.
 * - 401 logged out / 403 forbidden / 411 multi-device mismatch: the credentials are no good; stop and say
 *   "run `clawdis login`" (a restart cannot help: fatal).
 * - 440 replaced: another client took over these credentials (a second gateway, `clawdis login`); stop and say so
 *   instead of taking it back, which would make the two kick each other out in a loop (fatal too).
 */

export type CloseDecision =
  | { action: "reconnect"; delayMs: number; reason: string }
  | { action: "stop"; reason: string; message: string };

/** The first reconnect waits about this long; each further attempt doubles it, up to RECONNECT_MAX_MS. */
export const RECONNECT_BASE_MS = 1_000;
export const RECONNECT_MAX_MS = 60_000;

const TRANSIENT: Record<number, string> = {
  408: "connection lost or timed out",
  428: "connection closed",
  500: "bad session",
  503: "WhatsApp unavailable",
  515: "restart required",
};

/**
 * @param statusCode the close's status code; undefined for a network error without one
 * @param attempt reconnects already tried since the socket was last open (0 for the first)
 * @param random a number in [0, 1): the jitter (the wait is between 50 % and 100 % of the backoff)
 */
export function classifyClose(
  statusCode: number | undefined,
  attempt: number,
  random: number,
): CloseDecision {
  switch (statusCode) {
    case 401:
      return {
        action: "stop",
        reason: "logged out",
        message: "WhatsApp logged this device out (401) — stop the gateway, run `clawdis login`, start it",
      };
    case 403:
      return {
        action: "stop",
        reason: "forbidden",
        message:
          "WhatsApp refuses this account (403) — check the phone, then stop the gateway, run `clawdis login`, start it",
      };
    case 411:
      return {
        action: "stop",
        reason: "multi-device mismatch",
        message:
          "WhatsApp says this link is out of date (411) — stop the gateway, run `clawdis logout` and `clawdis login`, start it",
      };
    case 440:
      return {
        action: "stop",
        reason: "replaced",
        message:
          "another client took over this WhatsApp link (440: a second gateway or `clawdis login`?); stop it, then restart the gateway",
      };
    case 515:
      return { action: "reconnect", delayMs: 0, reason: TRANSIENT[515] ?? "restart required" };
  }
  const reason =
    statusCode === undefined
      ? "network error"
      : (TRANSIENT[statusCode] ?? `closed with status ${statusCode}`);
  return { action: "reconnect", delayMs: reconnectDelay(attempt, random), reason };
}

/** The capped exponential backoff with jitter: attempt 0 waits 0.5–1 s, 1 waits 1–2 s, … at most 30–60 s. */
export function reconnectDelay(attempt: number, random: number): number {
  const backoff = Math.min(RECONNECT_MAX_MS, RECONNECT_BASE_MS * 2 ** Math.max(0, Math.min(attempt, 30)));
  const jitter = Math.min(Math.max(random, 0), 1);
  return Math.round(backoff * (0.5 + jitter / 2));
}
