import type { Clock } from "../core/clock.js";

/**
 * A deferred batch starts once no deferred update joined it for this long (the updates of a busy gateway keep
 * joining until their longest wait is up; a lone update waits this long, not its whole `deferMs`).
 */
export const DEFER_QUIET_MS = 20;

interface Batch<T> {
  items: T[];
  started: boolean;
  /** Latest start allowed by the deferred updates in it (clock ms). */
  due?: number;
  timer?: unknown;
}

/**
 * The store's group commit: updates join the open batch until its locked section begins (`close`), and the batch
 * runs as one write. When a batch starts:
 * - at once when an update that may not wait joins it (`add` without `deferMs`), or on `flush`;
 * - else (write-behind: every update in it may wait) once no update joined for DEFER_QUIET_MS, and never later
 *   than the smallest `deferMs` of its updates after they joined;
 * - a started batch stays open (takes more updates) until `close`, i.e. while it waits for the lock.
 * Timers run on `clock`, so tests move them.
 */
export class UpdateBatches<T> {
  private open: Batch<T> | undefined;
  private readonly runs = new Set<Promise<void>>();

  constructor(
    private readonly clock: Clock,
    /** Runs a batch: calls `close(items)` when its locked section begins; never rejects. */
    private readonly run: (items: T[]) => Promise<void>,
  ) {}

  /** Adds `item` to the open batch; `deferMs`: it may wait up to that long to share a write. */
  add(item: T, deferMs?: number): void {
    let batch = this.open;
    if (batch === undefined) {
      batch = { items: [], started: false };
      this.open = batch;
    }
    batch.items.push(item);
    if (batch.started) return;
    if (deferMs === undefined) {
      this.start(batch);
      return;
    }
    const now = this.clock.now();
    batch.due = Math.min(batch.due ?? Number.POSITIVE_INFINITY, now + Math.max(0, deferMs));
    const at = Math.min(batch.due, now + DEFER_QUIET_MS);
    if (batch.timer !== undefined) this.clock.clearTimeout(batch.timer);
    const started = batch;
    batch.timer = this.clock.setTimeout(() => this.start(started), at - now);
  }

  /** The batch `items` has its lock: updates from now on go to the next batch. */
  close(items: T[]): void {
    if (this.open?.items === items) this.open = undefined;
  }

  /** Updates waiting in a batch that has not started. */
  get waiting(): number {
    return this.open && !this.open.started ? this.open.items.length : 0;
  }

  /** Starts the waiting batch now, if any; resolves once every batch started so far (this one too) has run. */
  async flush(): Promise<void> {
    if (this.open && !this.open.started) this.start(this.open);
    await Promise.all([...this.runs]);
  }

  private start(batch: Batch<T>): void {
    if (batch.started) return;
    batch.started = true;
    if (batch.timer !== undefined) this.clock.clearTimeout(batch.timer);
    batch.timer = undefined;
    const running = this.run(batch.items);
    this.runs.add(running);
    void running.finally(() => this.runs.delete(running));
  }
}
