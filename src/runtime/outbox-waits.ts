import type { Clock } from "../core/clock.js";

/** A parked lane also looks again this often (a transport's health can come back without a state change). */
export const PARK_POLL_MS = 1000;

/**
 * The outbox's waiting (outbox.ts): a parked lane waiting for its transport, a lane waiting out a retry delay, and
 * callers waiting for the lanes to settle.
 *
 * Contract:
 * - `parked(channel)` resolves on `wake(channel)`, on `cutAll()`, or after PARK_POLL_MS, whichever comes first.
 * - `backoff(channel, ms)` resolves after `ms`, on `cutAll()`, or (with a `channel`: a backoff, not a rate limit's
 *   own wait) once `sendsPass(channel)` says a send on that channel went through.
 * - `waitFor(done, maxMs)` resolves once `done()` holds, checked now and at every `changed()`, or after `maxMs`
 *   of real time.
 */
export class OutboxWaits {
  private readonly wakers = new Map<string, Set<() => void>>();
  private readonly settleWaiters = new Set<() => void>();
  /** Retry delays in progress, cut short by `stop()`. */
  private readonly stopWaiters = new Set<() => void>();
  /** Backoff delays (not a rate limit's own wait) by channel, cut short when a send on that channel goes through. */
  private readonly backoffWaiters = new Map<string, Set<() => void>>();

  constructor(private readonly clock: Clock) {}

  parked(channel: string): Promise<void> {
    return new Promise<void>((resume) => {
      let set = this.wakers.get(channel);
      if (!set) {
        set = new Set();
        this.wakers.set(channel, set);
      }
      const once = () => {
        set.delete(once);
        this.clock.clearTimeout(poll);
        resume();
      };
      const poll = this.clock.setTimeout(once, PARK_POLL_MS);
      set.add(once);
    });
  }

  wake(channel: string): void {
    const waiting = this.wakers.get(channel);
    if (!waiting) return;
    this.wakers.delete(channel);
    for (const resume of waiting) resume();
  }

  backoff(channel: string | undefined, ms: number): Promise<void> {
    return new Promise<void>((resume) => {
      const backoff = channel === undefined ? undefined : this.backoffWaitersOf(channel);
      const cut = () => {
        this.clock.clearTimeout(timer);
        this.stopWaiters.delete(cut);
        backoff?.delete(cut);
        resume();
      };
      const timer = this.clock.setTimeout(cut, ms);
      this.stopWaiters.add(cut);
      backoff?.add(cut);
    });
  }

  private backoffWaitersOf(channel: string): Set<() => void> {
    let set = this.backoffWaiters.get(channel);
    if (!set) {
      set = new Set();
      this.backoffWaiters.set(channel, set);
    }
    return set;
  }

  /** A send on `channel` went through: its other lanes backing off after a failure try again now. */
  sendsPass(channel: string): void {
    const waiting = this.backoffWaiters.get(channel);
    if (!waiting || waiting.size === 0) return;
    this.backoffWaiters.delete(channel);
    for (const cut of [...waiting]) cut();
  }

  /** Ends every retry delay and every parked wait (the outbox stops). */
  cutAll(): void {
    for (const cut of [...this.stopWaiters]) cut();
    this.stopWaiters.clear();
    for (const channel of [...this.wakers.keys()]) this.wake(channel);
  }

  /** Resolves once `done()` holds (checked now and on every `changed()`), or after `maxMs` of real time. */
  waitFor(done: () => boolean, maxMs: number): Promise<void> {
    return new Promise((resolve) => {
      const finish = () => {
        clearTimeout(timer);
        this.settleWaiters.delete(check);
        resolve();
      };
      const check = () => {
        if (done()) finish();
      };
      const timer = setTimeout(finish, maxMs);
      timer.unref();
      this.settleWaiters.add(check);
      check();
    });
  }

  /** A lane changed: the `waitFor` callers check again. */
  changed(): void {
    for (const waiter of [...this.settleWaiters]) waiter();
  }
}
