/** Time, injectable so that tests of idle expiry and watchdogs take milliseconds. */
export interface Clock {
  /** Epoch milliseconds. */
  now(): number;
  setTimeout(fn: () => void, ms: number): unknown;
  clearTimeout(handle: unknown): void;
}

export const systemClock: Clock = {
  now: () => Date.now(),
  setTimeout: (fn, ms) => {
    const handle = setTimeout(fn, ms);
    handle.unref?.();
    return handle;
  },
  clearTimeout: (handle) => clearTimeout(handle as NodeJS.Timeout),
};

/** A clock that moves only when told; timers fire in order of their due time. */
export class ManualClock implements Clock {
  private current: number;
  private timers: { id: number; due: number; fn: () => void }[] = [];
  private nextId = 1;

  constructor(start = Date.UTC(2026, 0, 1)) {
    this.current = start;
  }

  now(): number {
    return this.current;
  }

  setTimeout(fn: () => void, ms: number): unknown {
    const id = this.nextId++;
    this.timers.push({ id, due: this.current + Math.max(0, ms), fn });
    return id;
  }

  clearTimeout(handle: unknown): void {
    this.timers = this.timers.filter((t) => t.id !== handle);
  }

  /** Moves time forward, firing every timer that falls due on the way. */
  advance(ms: number): void {
    const target = this.current + ms;
    for (;;) {
      this.timers.sort((a, b) => a.due - b.due || a.id - b.id);
      const next = this.timers[0];
      if (!next || next.due > target) break;
      this.timers.shift();
      this.current = next.due;
      next.fn();
    }
    this.current = target;
  }

  set(epochMs: number): void {
    this.current = epochMs;
  }
}
