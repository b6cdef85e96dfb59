/**
 * Per-session serial execution: one turn at a time per session key, sessions independent of each other.
 *
 * Contract:
 * - Items of one key run in arrival order, one at a time; no item is ever dropped.
 * - While an item runs, `takeJoinable(key, predicate)` removes and returns the waiting items that may join the
 *   running turn (in order); the rest keep their place.
 * - `drain()` resolves when every key is idle.
 */
export class SessionQueue<T> {
  private readonly lanes = new Map<string, { items: T[]; running: boolean }>();
  private idleWaiters: (() => void)[] = [];

  constructor(private readonly worker: (key: string, item: T) => Promise<void>) {}

  push(key: string, item: T): void {
    let lane = this.lanes.get(key);
    if (!lane) {
      lane = { items: [], running: false };
      this.lanes.set(key, lane);
    }
    lane.items.push(item);
    if (!lane.running) void this.run(key, lane);
  }

  isBusy(key: string): boolean {
    return this.lanes.get(key)?.running ?? false;
  }

  waiting(key: string): number {
    return this.lanes.get(key)?.items.length ?? 0;
  }

  /** Removes and returns the waiting items of `key` that match, keeping the order of both groups. */
  takeJoinable(key: string, predicate: (item: T) => boolean): T[] {
    const lane = this.lanes.get(key);
    if (!lane) return [];
    const taken: T[] = [];
    lane.items = lane.items.filter((item) => {
      if (predicate(item)) {
        taken.push(item);
        return false;
      }
      return true;
    });
    return taken;
  }

  /** The first waiting item of `key` that matches, left where it is. */
  find(key: string, predicate: (item: T) => boolean): T | undefined {
    return this.lanes.get(key)?.items.find(predicate);
  }

  drain(): Promise<void> {
    if (this.lanes.size === 0) return Promise.resolve();
    return new Promise((resolve) => this.idleWaiters.push(resolve));
  }

  private async run(key: string, lane: { items: T[]; running: boolean }): Promise<void> {
    lane.running = true;
    try {
      for (;;) {
        const item = lane.items.shift();
        if (item === undefined) break;
        // The worker reports its own failures; a throw here is a bug, and must not stall the lane.
        await this.worker(key, item).catch(() => {});
      }
    } finally {
      lane.running = false;
      this.lanes.delete(key);
      if (this.lanes.size === 0) {
        const waiters = this.idleWaiters;
        this.idleWaiters = [];
        for (const w of waiters) w();
      }
    }
  }
}
