/**
 * Waits with a deadline, for the fakes and harnesses: a wait for something that never happens fails with an
 * error naming what it waited for (and what there was instead), not with Vitest's generic test timeout.
 */

/** A fake's default deadline: below Vitest's 30 s test timeout, so the wait's own error is the one reported. */
export const WAIT_DEADLINE_MS = 15_000;

export interface WaitOptions {
  /** How long to wait before failing (default WAIT_DEADLINE_MS). */
  timeoutMs?: number;
}

/**
 * A promise settled by `start`'s callbacks, or rejected after `timeoutMs` with "timed out after N ms waiting for
 * <what>" (`what` is read then, so it can describe the state at the deadline). `start` subscribes whatever wakes
 * the wait and returns the unsubscribe, which runs once the promise settles either way (also when `start` settles
 * it at once).
 */
export function waitWithDeadline<T>(
  what: string | (() => string),
  timeoutMs: number | undefined,
  start: (resolve: (value: T) => void, reject: (error: unknown) => void) => () => void,
): Promise<T> {
  const ms = timeoutMs ?? WAIT_DEADLINE_MS;
  return new Promise<T>((resolve, reject) => {
    let settled = false;
    let unsubscribe: (() => void) | undefined;
    const finish = (settle: () => void) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      unsubscribe?.();
      settle();
    };
    const timer = setTimeout(() => {
      finish(() => {
        const text = typeof what === "function" ? what() : what;
        reject(new Error(`timed out after ${ms} ms waiting for ${text}`));
      });
    }, ms);
    const stop = start(
      (value) => finish(() => resolve(value)),
      (error) => finish(() => reject(error)),
    );
    if (settled) stop();
    else unsubscribe = stop;
  });
}
