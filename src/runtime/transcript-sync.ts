import { describeError } from "../core/errors.js";
import type { Logger } from "../core/logger.js";
import type { Journal } from "../sessions/journal.js";
import { syncFile } from "./tail-cache.js";

/** How soon a transcript line written without fsync is on disk (a pass syncs every transcript written since). */
export const TRANSCRIPT_SYNC_MS = 1000;

/**
 * Syncs behind the transcripts this process appends to without fsync (docs/runtime.md, "A turn"). Contract:
 * - `noteWritten(path)` is called after lines were written to `path` (never before: a pass that ran between would
 *   miss them); within `everyMs` a pass fsyncs every path noted since the last one;
 * - a pass first takes the journal's newest `reply` record, then syncs, then marks that record `synced`: every
 *   reply record up to it had its lines written, and its path noted, before the pass began;
 * - `syncAll` syncs every path noted so far, one run at a time in call order; a path whose fsync fails stays noted
 *   and the call rejects. The journal calls it before a compaction drops its reply records, and at close.
 * A transcript that no longer exists has nothing to sync.
 */
export class TranscriptSync {
  private dirty = new Set<string>();
  private timer: NodeJS.Timeout | undefined;
  private chain: Promise<void> = Promise.resolve();
  private stopped = false;

  constructor(
    private readonly deps: {
      journal: Pick<Journal, "lastReplyWritten" | "markSynced">;
      logger: Logger;
      now: () => number;
      everyMs?: number;
    },
  ) {}

  noteWritten(path: string): void {
    this.dirty.add(path);
    this.schedule();
  }

  /** How many transcripts wait for a pass. */
  pendingCount(): number {
    return this.dirty.size;
  }

  syncAll(): Promise<void> {
    const run = this.chain.then(() => this.syncNoted());
    this.chain = run.catch(() => {});
    return run;
  }

  /** A pass now (what the timer runs): sync, then mark the journal's reply records up to the newest. */
  async pass(): Promise<void> {
    const upTo = this.deps.journal.lastReplyWritten();
    try {
      await this.syncAll();
    } catch (error) {
      this.deps.logger.warn("could not sync transcripts to disk; trying again", {
        error: describeError(error),
      });
      this.schedule();
      return;
    }
    if (upTo !== undefined) await this.deps.journal.markSynced(upTo, this.deps.now());
  }

  /** No more timed passes (what is noted is still synced by `syncAll`). */
  stop(): void {
    this.stopped = true;
    clearTimeout(this.timer);
    this.timer = undefined;
  }

  private schedule(): void {
    if (this.timer || this.stopped) return;
    this.timer = setTimeout(() => {
      this.timer = undefined;
      void this.pass();
    }, this.deps.everyMs ?? TRANSCRIPT_SYNC_MS);
    this.timer.unref();
  }

  private async syncNoted(): Promise<void> {
    const paths = [...this.dirty];
    this.dirty.clear();
    const results = await Promise.allSettled(paths.map((path) => syncFile(path)));
    let failure: unknown;
    results.forEach((result, i) => {
      if (result.status === "fulfilled") return;
      this.dirty.add(paths[i]!);
      failure ??= result.reason;
    });
    if (failure !== undefined) throw failure;
  }
}
