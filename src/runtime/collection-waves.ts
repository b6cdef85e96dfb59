import type { Clock } from "../core/clock.js";
import type { Logger } from "../core/logger.js";
import { type CollectOptions, collectGarbage as collectFull } from "./collect-garbage.js";

/**
 * After this many loads and unloads of sessions since the last time (a burst of messages to sessions not held, a
 * wave of unloads), the memory the burst took is given back to the system: a full collection once it is over
 * (no session touched, loaded or unloaded for COLLECT_QUIET_MS), and at most COLLECT_MAX_WAIT_MS after it began
 * while loads and unloads go on. V8 would keep the heap a burst grew to; one collection of a ~60 MB heap takes some
 * 30 ms. Once it is over, a compacting one follows (COMPACT_AFTER_MS later, collect-garbage.ts): what survived moves
 * out of mostly empty pages, which are given back too, and so does the young generation the burst grew.
 *
 * Work for a session already held does not count: it leaves what the heap holds where it was (a forced collection
 * then gave nothing back: RSS unchanged), and each forced full collection costs the messages after it. V8
 * deoptimizes the code that refers to objects that died (20-45 hot functions per collection, compiled again over
 * the next few hundred messages): hand-in → model request p50 0.62-0.73 ms without against 0.82-1.29 ms with a
 * collection after every 600 messages to 1,000 sessions held (docs/benchmarks.md).
 */
export const RELEASES_BEFORE_COLLECTION = 500;
export const COLLECT_QUIET_MS = 2000;
/**
 * After the plain collection that ends a burst, the compacting one (collectNow). Over 5 s: V8 gives its young
 * generation back (the semi-spaces a burst grew to 16 MB each, ~30 MB of RSS) only at a full collection after
 * which the allocation rate it measured over the last ~5 s of collections is low; the plain one's measure still
 * holds the burst's tail. At 0.5 s, the young generation stayed until V8's own memory reducer, ~30 s of idleness
 * later: RSS after one message to each of 10,000 sessions 150 MB, against 119-120 MB now (the bench's memory part).
 */
export const COMPACT_AFTER_MS = 5_500;
export const COLLECT_MAX_WAIT_MS = 10_000;

/**
 * Bursts of session loads and unloads, each ended by a full collection (and a compacting one once all is quiet):
 * the memory a burst took is given back to the system. `note` on each piece of work, `stop` at the gateway's stop
 * (no collection after it). Timers run on the injected clock.
 */
export class CollectionWaves {
  /** Loads and unloads since the last collection, when the first and the last happened, the collection's timer. */
  private eventsSinceCollection = 0;
  private waveStartedAt = 0;
  private lastEventAt = 0;
  private collectTimer: unknown;
  /** The compacting collection due after a burst's last plain one. */
  private compactTimer: unknown;
  private stopped = false;

  constructor(
    private readonly clock: Clock,
    private readonly logger: Pick<Logger, "info">,
    private readonly collectGarbage: (options: CollectOptions) => void = collectFull,
  ) {}

  /** No collection from now on; the timers are cleared. */
  stop(): void {
    this.stopped = true;
    if (this.collectTimer !== undefined) this.clock.clearTimeout(this.collectTimer);
    this.collectTimer = undefined;
    if (this.compactTimer !== undefined) this.clock.clearTimeout(this.compactTimer);
    this.compactTimer = undefined;
  }

  /**
   * Notes a piece of work (`counts`: a load or an unload, what a burst is made of; a message to a session held
   * only keeps the time from being quiet). A burst of RELEASES_BEFORE_COLLECTION loads and unloads ends in one
   * collection. One timer per burst, not one per event: when it fires it looks at the time of the last event. A
   * burst that outlasts COLLECT_MAX_WAIT_MS is collected every COLLECT_MAX_WAIT_MS while loads and unloads go on,
   * and once more when all work is quiet (the only one of them that compacts); work that only touches sessions held
   * is never collected during.
   */
  note(counts: boolean): void {
    const now = this.clock.now();
    this.lastEventAt = now;
    if (!counts) return;
    if (this.eventsSinceCollection === 0) this.waveStartedAt = now;
    this.eventsSinceCollection += 1;
    if (this.eventsSinceCollection >= RELEASES_BEFORE_COLLECTION && this.collectTimer === undefined) {
      this.armCollection(now);
    }
  }

  private armCollection(now: number): void {
    const quietAt = this.lastEventAt + COLLECT_QUIET_MS;
    const due =
      this.eventsSinceCollection > 0 ? Math.min(quietAt, this.waveStartedAt + COLLECT_MAX_WAIT_MS) : quietAt;
    this.collectTimer = this.clock.setTimeout(
      () => {
        this.collectTimer = undefined;
        const at = this.clock.now();
        const quiet = at >= this.lastEventAt + COLLECT_QUIET_MS;
        const overdue = this.eventsSinceCollection > 0 && at >= this.waveStartedAt + COLLECT_MAX_WAIT_MS;
        if (!quiet && !overdue) {
          this.armCollection(at);
          return;
        }
        this.collectNow(quiet);
        // Collected while it goes on: its end is collected too (compacting), once quiet, whatever happens until then.
        if (!quiet && !this.stopped) this.armCollection(at);
      },
      Math.max(0, due - now),
    );
  }

  /**
   * A plain collection; once the burst is over (`quiet`) a compacting one follows COMPACT_AFTER_MS later, unless
   * something happened meanwhile (a new burst then gets its own collections). The pause between lets V8 give back
   * the pages the plain one freed before the compaction needs room for what it moves (the peak stays lower).
   */
  private collectNow(quiet: boolean): void {
    const events = this.eventsSinceCollection;
    this.eventsSinceCollection = 0;
    if (this.stopped) return;
    this.collect(false, events);
    if (!quiet) return;
    const lastEventAt = this.lastEventAt;
    if (this.compactTimer !== undefined) this.clock.clearTimeout(this.compactTimer);
    this.compactTimer = this.clock.setTimeout(() => {
      this.compactTimer = undefined;
      if (this.stopped || this.lastEventAt !== lastEventAt) return;
      this.collect(true, 0);
    }, COMPACT_AFTER_MS);
  }

  private collect(compact: boolean, events: number): void {
    const started = performance.now();
    this.collectGarbage({ compact });
    // Wall time of the pause, for the log (what a message that came meanwhile waited).
    const pauseMs = Math.round(performance.now() - started);
    this.logger.info("memory of a burst given back", { events, compact, pauseMs });
  }
}
