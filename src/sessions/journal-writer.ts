import { statSync, writeSync } from "node:fs";
import { type FileHandle, open, rename } from "node:fs/promises";
import { describeError } from "../core/errors.js";
import type { Logger } from "../core/logger.js";
import type { JournalRecord, JournalState } from "./journal-state.js";

/** Resolves in the event loop's check phase: after the I/O callbacks, microtasks and ticks queued so far. */
function afterThisTurn(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve));
}

export interface JournalWriterOptions {
  path: string;
  dir: string;
  logger: Logger;
  compactEvery?: number;
  compactBytes?: number;
  /** What the records say; a record is applied to it once it is on disk. */
  state: JournalState;
  /** See JournalOptions.syncTranscripts. */
  syncTranscripts?: () => Promise<void>;
  /** Repairs the replies found unsynced at open; false while that cannot be done (then nothing is compacted). */
  repairNow: () => Promise<boolean>;
}

/**
 * The journal file's writer (journal.ts): group commit, the lines written at once, replaced-file detection and
 * compaction in place.
 *
 * Contract:
 * - `write` resolves once the record is written and fsync'd with whatever else was queued (then it is applied to
 *   the state); a failed write or fsync rejects and applies nothing.
 * - After `compactEvery` records or `compactBytes` bytes the file is rewritten with only what the state still
 *   needs (temp + fsync + rename + directory fsync); a file replaced or removed by something else is written out
 *   afresh from the state before the next write.
 * - After `close` every write fails.
 */
export class JournalWriter {
  private handle: FileHandle | undefined;
  private pending: {
    line: string;
    record: JournalRecord;
    resolve: () => void;
    reject: (error: unknown) => void;
    /** Called once the line is written, before the fsync. */
    written?: () => void;
    /** Already written to the file by `writeAtOnce`: the flush only fsyncs and applies it. */
    preWritten?: boolean;
  }[] = [];
  /** The batch the flush is writing now (taken out of `pending`). */
  private batch: JournalWriter["pending"] = [];
  /** While a compaction runs: nothing is written at once (it would go to the file being replaced). */
  private compacting = false;
  private flushing: Promise<void> | undefined;
  private recordsSinceCompact = 0;
  private bytesSinceCompact = 0;
  /** After `close`: every write fails (nothing reopens the file behind the owner's back). */
  closed = false;
  /** Device and inode of the file this process appends to (checked before each write). */
  private identity: { dev: number; ino: number } | undefined;
  /** The newest `reply` record written to the file by this process (what a `synced` may claim). */
  lastReply: string | undefined;
  private readonly path: string;

  constructor(private readonly options: JournalWriterOptions) {
    this.path = options.path;
  }

  /** Whether a file is open to append to. */
  get isOpen(): boolean {
    return this.handle !== undefined;
  }

  /** Resolves once every record queued so far is written and fsync'd (or failed). */
  async settled(): Promise<void> {
    while (this.flushing) await this.flushing;
  }

  /** Stops writing: waits for the flush under way and closes the file. */
  async close(): Promise<void> {
    this.closed = true;
    await this.flushing;
    await this.handle?.close();
    this.handle = undefined;
  }

  /**
   * Resolves once the record is on disk (written and fsync'd with whatever else was queued); applied only then.
   * A `delivered` or `end` record (a reply reached its chat) is written to the file at once, in this call, whether
   * or not an fsync of earlier records runs, so a crash right after the send finds it (a kill keeps what was
   * written; only a power cut needs the fsync): the window in which a crash sends a part again is as short as one
   * write. It is fsync'd and applied with the next batch. (Its record's `accept` is on disk already: a reply is
   * only sent for an acknowledged message.)
   */
  write(record: JournalRecord, line: string, written?: () => void): Promise<void> {
    return new Promise((resolve, reject) => {
      const preWritten = (record.op === "delivered" || record.op === "end") && this.writeAtOnce(line);
      this.pending.push({
        line,
        record,
        resolve,
        reject,
        ...(written ? { written } : {}),
        ...(preWritten ? { preWritten } : {}),
      });
      this.startFlush();
    });
  }

  /**
   * Starts the flush loop unless it runs. A record queued after the loop found nothing left but before it was
   * marked done (a write from a continuation of the loop's last `resolve`) starts the next loop.
   */
  private startFlush(): void {
    this.flushing ??= this.flush().finally(() => {
      this.flushing = undefined;
      if (this.pending.length > 0) this.startFlush();
    });
  }

  /** Appends `line` now, outside the group commit; false (nothing or a failed write) if it cannot be. */
  private writeAtOnce(line: string): boolean {
    if (!this.handle || this.closed || this.compacting) return false;
    try {
      writeAll(this.handle.fd, Buffer.from(line, "utf8"));
      return true;
    } catch {
      return false;
    }
  }

  private async flush(): Promise<void> {
    while (this.pending.length > 0) {
      const batch = this.pending.splice(0);
      this.batch = batch;
      const text = batch.map((b) => b.line).join("");
      try {
        const handle = await this.writableHandle();
        // The write is a synchronous page-cache copy (an async one costs more CPU than the copy); the datasync
        // waits off the event loop. Lines written at once are not written again (unless a compaction dropped
        // them: it clears `preWritten`).
        const unwritten = batch.some((b) => b.preWritten)
          ? batch
              .filter((b) => !b.preWritten)
              .map((b) => b.line)
              .join("")
          : text;
        if (unwritten.length > 0) writeAll(handle.fd, Buffer.from(unwritten, "utf8"));
        for (const b of batch) if (b.record.op === "reply") this.lastReply = b.record.id;
        for (const b of batch) b.written?.();
        // The datasync starts once what this turn of the event loop set off has run: the turn that took the
        // message goes on to its model request first (`acceptWritten`), so on a machine with few cores the
        // fsync's kernel work does not hold the request back (p50 hand-in -> model request 0.77-0.85 -> 0.67-0.75
        // ms on two cores, docs/runtime.md step 4). Nothing waits for it that did not before: every ack still does.
        await afterThisTurn();
        await handle.datasync();
      } catch (error) {
        this.options.logger.error("journal write failed", { error: describeError(error) });
        for (const b of batch) b.reject(error);
        continue;
      }
      for (const b of batch) this.options.state.apply(b.record, Buffer.byteLength(b.line));
      this.recordsSinceCompact += batch.length;
      this.bytesSinceCompact += Buffer.byteLength(text);
      for (const b of batch) b.resolve();
      if (
        this.recordsSinceCompact >= (this.options.compactEvery ?? 5_000) ||
        this.bytesSinceCompact >= (this.options.compactBytes ?? 64 * 1024 * 1024)
      ) {
        await this.compactInPlace().catch((error: unknown) => {
          // The records are safe in the old file, which stays in use; compaction is tried again later.
          this.options.logger.error("journal compaction failed", { error: describeError(error) });
        });
      }
    }
  }

  /**
   * The handle to append to: reopened when a failed compaction left none, and checked to still be the file at
   * `path` (if something replaced or removed it, this process's state is written out afresh first, so nothing it
   * accepted is lost with an unlinked file).
   */
  private async writableHandle(): Promise<FileHandle> {
    if (this.closed) throw new Error(`the journal ${this.path} is closed`);
    if (!this.handle) await this.reopen();
    let current: { ino: number; dev: number } | undefined;
    try {
      // Synchronous: one lookup of a cached path, cheaper than a trip through the threadpool.
      current = statSync(this.path, { throwIfNoEntry: false });
    } catch {
      current = undefined;
    }
    if (!current || current.ino !== this.identity?.ino || current.dev !== this.identity?.dev) {
      this.options.logger.error(
        "journal file was replaced or removed by something else; writing this process's records to a new one",
        { path: this.path },
      );
      await this.compactInPlace({ replaced: true });
    }
    return this.handle!;
  }

  /**
   * Rewrites the file in place. The `reply` records are dropped, so what they stand for must be in the transcripts
   * on disk first; when the file was `replaced` by something else they are gone already, and this process's state
   * is written out whatever the transcripts' state.
   */
  private async compactInPlace(options: { replaced?: boolean } = {}): Promise<void> {
    // Lines written at once but not applied yet are not in the rewritten file: they are written again after it.
    this.compacting = true;
    for (const b of [...this.pending, ...this.batch]) b.preWritten = false;
    try {
      await this.compactInPlaceNow(options);
    } finally {
      this.compacting = false;
    }
  }

  private async compactInPlaceNow(options: { replaced?: boolean }): Promise<void> {
    if (!options.replaced) {
      if (!(await this.options.repairNow())) throw new Error("replies found at open are not repaired yet");
      await this.options.syncTranscripts?.();
    } else {
      await this.options.syncTranscripts?.().catch(() => {});
    }
    const old = this.handle;
    this.handle = undefined;
    await old?.close().catch(() => {});
    try {
      await this.compact();
    } finally {
      await this.reopen();
    }
  }

  async reopen(): Promise<void> {
    const handle = await open(this.path, "a", 0o600);
    const info = await handle.stat();
    this.handle = handle;
    this.identity = { dev: info.dev, ino: info.ino };
  }

  /**
   * Whether `bytes` (the file as read) are already what `compact` would write: a gateway stopped cleanly, or
   * started and stopped with nothing new, left it so.
   */
  isCompact(bytes: Buffer): boolean {
    const lines = this.options.state.compactLines();
    let size = 0;
    for (const line of lines) size += Buffer.byteLength(line) + 1;
    return size === bytes.length && bytes.equals(Buffer.from(`${lines.join("\n")}\n`));
  }

  /** Rewrites the file with only what is still needed: the dedupe keys and the open records. */
  async compact(): Promise<void> {
    const lines = this.options.state.compactLines();
    const tmp = `${this.path}.tmp-${process.pid}`;
    const handle = await open(tmp, "w", 0o600);
    try {
      // Line by line: the open records may be large together, one string of all of them need not fit.
      for (const line of lines) await handle.write(`${line}\n`);
      await handle.sync();
    } finally {
      await handle.close();
    }
    await rename(tmp, this.path);
    await syncDir(this.options.dir);
    this.recordsSinceCompact = 0;
    this.bytesSinceCompact = 0;
  }
}

/** Writes all of `bytes` to a descriptor opened for appending. */
function writeAll(fd: number, bytes: Buffer): void {
  let written = 0;
  while (written < bytes.length) written += writeSync(fd, bytes, written, bytes.length - written);
}

/** fsync of a directory, so that a rename in it survives a power cut. Best effort where the OS refuses. */
async function syncDir(dir: string): Promise<void> {
  const handle = await open(dir, "r").catch(() => undefined);
  if (!handle) return;
  try {
    await handle.sync().catch(() => {});
  } finally {
    await handle.close();
  }
}
