import type { Clock } from "../core/clock.js";

export interface DeadlineOptions {
  /** Milliseconds on `clock` before the work is aborted. */
  ms: number;
  clock: Clock;
  /** The rejection (and the signal's abort reason) when the deadline passes. */
  timeoutError: () => unknown;
  /** Aborting this aborts the work too; the promise rejects with its reason. */
  signal?: AbortSignal;
}

/**
 * Runs `work` with a signal that aborts when `ms` pass on `clock` or `options.signal` aborts.
 *
 * Contract: the returned promise settles at the first of (work settles, deadline, outer abort); it never waits
 * for work that ignores its signal. The timer is set before `work` is called and is always cleared. Once the
 * promise has settled, a late rejection of `work` is swallowed (no unhandled rejection). After success the
 * signal never aborts. An outer signal that is already aborted means `work` is not called at all.
 */
export function withDeadline<T>(
  work: (signal: AbortSignal) => Promise<T> | T,
  options: DeadlineOptions,
): Promise<T> {
  const { clock, signal: outer } = options;
  const controller = new AbortController();
  return new Promise<T>((resolve, reject) => {
    let settled = false;
    const finish = (): boolean => {
      if (settled) return false;
      settled = true;
      clock.clearTimeout(timer);
      outer?.removeEventListener("abort", onOuterAbort);
      return true;
    };
    const abortWith = (reason: unknown) => {
      if (!finish()) return;
      controller.abort(reason);
      reject(reason);
    };
    const onOuterAbort = () => abortWith(outer?.reason);
    const timer = clock.setTimeout(() => abortWith(options.timeoutError()), options.ms);

    if (outer?.aborted) {
      abortWith(outer.reason);
      return;
    }
    outer?.addEventListener("abort", onOuterAbort, { once: true });

    let running: Promise<T>;
    try {
      running = Promise.resolve(work(controller.signal));
    } catch (error) {
      running = Promise.reject(error);
    }
    running.then(
      (value) => {
        if (finish()) resolve(value);
      },
      (error: unknown) => {
        if (finish()) reject(error);
      },
    );
  });
}
