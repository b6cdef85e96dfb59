import { describeError } from "../core/errors.js";
import type { Logger } from "../core/logger.js";
import type { Journal } from "../sessions/journal.js";
import { syncFile } from "./tail-cache.js";

/** What a pass syncs through: a transcript writer that may still hold the file open (transcript-writer.ts). */
export interface HeldWriter {
  syncHeld(): Promise<boolean>;
}

/** How soon a reply held by the journal is in its transcript on disk too (a pass syncs every one noted since). */
export const TRANSCRIPT_SYNC_MS = 1000;

/**
 * A transcript synced within this long is hot: its next reply is made durable by the journal and synced by a pass,
 * instead of by an fsync of its own. A session answered less often than this pays one fsync per reply, as it
 * would anyway (and no pass: no burst of fsyncs); one answered more often pays about one fsync a second.
 */
export const HOT_MS = 1000;

/** Past this many synced paths remembered, those no longer hot are forgotten. */
const PRUNE_AT = 4096;

/** How many transcripts a pass syncs at a time. */
const SYNCS_AT_ONCE = 2;

/**
 * Syncs behind the transcripts whose replies the journal holds (docs/runtime.md, "A turn", step 5). Contract:
 * - `viaJournal(path)`: whether the next reply to `path` goes into a journal `reply` record (the transcript was
 *   synced within HOT_MS by the clock given, or a pass has it already); else the caller fsyncs the transcript
 *   and says so with `noteSynced`;
 * - `noteWritten(path)` is called after lines were written to `path` (never before: a pass that ran between would
 *   miss them) and before their `reply` record is; within `everyMs` a pass fsyncs every path noted since the last
 *   one;
 * - a pass first takes the journal's newest `reply` record, then syncs, then marks that record `synced`: every
 *   reply record up to it had its lines written, and its path noted, before the pass began;
 * - `syncAll` syncs every path noted so far, one run at a time in call order; a path whose fsync fails stays noted
 *   and the call rejects. The journal calls it before a compaction drops its reply records, and at close.
 * A transcript that no longer exists has nothing to sync.
 */
export class TranscriptSync {
  /** The paths noted since the last pass, each with the writer that wrote its lines (when one held it open). */
  private dirty = new Map<string, HeldWriter | undefined>();
  /** When each path was last synced (by its writer or a pass), by `now`. */
  private readonly synced = new Map<string, number>();
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

  viaJournal(path: string): boolean {
    if (this.dirty.has(path)) return true;
    const at = this.synced.get(path);
    return at !== undefined && this.deps.now() - at < HOT_MS;
  }

  /**
   * `writer`: the open writer the lines went through, if any; the pass syncs through its descriptor while it
   * still holds the file (no open and close of the path), else by the path. The newest note of a path says how:
   * lines noted before it are in the same file, or in one that was deleted or replaced since (nobody reads those).
   */
  noteWritten(path: string, writer?: HeldWriter): void {
    this.dirty.set(path, writer);
    this.schedule();
  }

  /** `path` was fsync'd by its writer just now. */
  noteSynced(path: string): void {
    this.synced.set(path, this.deps.now());
    if (this.synced.size > PRUNE_AT) this.prune();
  }

  private prune(): void {
    const now = this.deps.now();
    for (const [path, at] of this.synced) if (now - at >= HOT_MS) this.synced.delete(path);
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

  /**
   * A few fsyncs at a time: a pass over hundreds of transcripts would otherwise take every threadpool thread (the
   * journal's fdatasync waits behind them) and put all their kernel work on the cores at once.
   */
  private async syncNoted(): Promise<void> {
    const paths = [...this.dirty];
    this.dirty.clear();
    let next = 0;
    let failure: unknown;
    const worker = async () => {
      while (next < paths.length) {
        const [path, writer] = paths[next++]!;
        try {
          if (!(writer && (await writer.syncHeld()))) await syncFile(path);
          this.noteSynced(path);
        } catch (error) {
          if (!this.dirty.has(path)) this.dirty.set(path, writer);
          failure ??= error;
        }
      }
    };
    await Promise.all(Array.from({ length: Math.min(SYNCS_AT_ONCE, paths.length) }, worker));
    if (failure !== undefined) throw failure;
  }
}
