import type { Clock } from "../core/clock.js";
import { linkedAbort } from "../core/linked-abort.js";

/** Why a watchdog ended a step; carried as the AbortSignal's reason. */
export class WatchdogTimeout extends Error {
  constructor(
    readonly watchdog: string,
    readonly seconds: number,
  ) {
    super(`${watchdog} watchdog: nothing after ${seconds} s`);
    this.name = "WatchdogTimeout";
  }
}

/**
 * An AbortController with named deadlines on an injected clock. `arm(name, seconds)` (re)starts a deadline,
 * `disarm(name)` clears it; when one passes, the signal aborts with a `WatchdogTimeout`. `dispose()` clears all
 * timers and must be called in `finally`. A parent signal (stop, shutdown) aborts this one with its own reason.
 */
export class Watchdog {
  private readonly controller: AbortController;
  private readonly timers = new Map<string, unknown>();
  private readonly unlink: () => void;

  constructor(
    private readonly clock: Clock,
    parent?: AbortSignal,
  ) {
    ({ controller: this.controller, dispose: this.unlink } = linkedAbort(parent));
  }

  get signal(): AbortSignal {
    return this.controller.signal;
  }

  arm(name: string, seconds: number): void {
    this.armIn(name, seconds * 1000, seconds);
  }

  /** (Re)starts deadline `name` to pass in `delayMs`; `seconds` is the limit reported when it fires. */
  armIn(name: string, delayMs: number, seconds: number): void {
    this.disarm(name);
    const handle = this.clock.setTimeout(
      () => {
        this.timers.delete(name);
        this.controller.abort(new WatchdogTimeout(name, seconds));
      },
      Math.max(0, delayMs),
    );
    this.timers.set(name, handle);
  }

  disarm(name: string): void {
    const handle = this.timers.get(name);
    if (handle !== undefined) {
      this.clock.clearTimeout(handle);
      this.timers.delete(name);
    }
  }

  /** Ends the step now with `reason` (no deadline fired), as a parent's abort would; nothing once aborted. */
  cancel(reason: unknown): void {
    if (!this.controller.signal.aborted) this.controller.abort(reason);
  }

  /** The watchdog that fired, if any. */
  fired(): WatchdogTimeout | undefined {
    const reason: unknown = this.controller.signal.reason;
    return reason instanceof WatchdogTimeout ? reason : undefined;
  }

  dispose(): void {
    for (const handle of this.timers.values()) this.clock.clearTimeout(handle);
    this.timers.clear();
    this.unlink();
  }
}
