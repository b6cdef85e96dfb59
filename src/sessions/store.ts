// Over 400 lines, for now: `SessionStore` is one cache of one file. Its read path (current, fresh, adopt) and
// write path (write, afterRename, beforeRename) share the image, the trust of its version and the lock, and each
// changes what the other may assume; the pure parts live in the store-*.ts files it imports.
import { unlink } from "node:fs/promises";
import { dirname } from "node:path";
import { type Clock, systemClock } from "../core/clock.js";
import { ClawdisError, describeError } from "../core/errors.js";
import type { Logger } from "../core/logger.js";
import { utf8Text } from "../core/utf8-text.js";
import { quoteId } from "./session-id.js";
import { transcriptPathFor } from "./session-paths.js";
import { UpdateBatches } from "./store-batches.js";
import { applyUpdate, type Changes, noChanges, type UpdateFn } from "./store-changes.js";
import { diffStore } from "./store-diff.js";
import { changeTimesAreFine } from "./store-fine-times.js";
import { type RawStore, StoreImage } from "./store-image.js";
import type { Layout } from "./store-layout.js";
import { type HeldLock, LOCK_STALE_MS, withFileLock } from "./store-lock.js";
import {
  type EntryProblem,
  nullPrototypeCopy,
  parseStoreText,
  setOwn,
  storeParseReason,
} from "./store-parse.js";
import { applySegments, piecesOf, planPatch, spareFor, wholeFile } from "./store-patch.js";
import {
  type FileVersion,
  MAX_STORE_BYTES,
  readStoreBytes,
  sameVersion,
  statStoreFile,
  statStoreFileSync,
  tooLargeReason,
  UNKNOWN_VERSION,
} from "./store-read.js";
import { keepBadCopy, replacementFor } from "./store-set-aside.js";
import { fileHolds, readStoreSpliced } from "./store-splice.js";
import { COARSE_TICK_MS, changedWithinTick, SAME_TICK_MS, trustedAfterRead } from "./store-trust.js";
import { type PiecesWrite, writePiecesAtomic } from "./store-write.js";
import type { SessionEntry, SessionMap } from "./types.js";
import { type PendingUpdate, UnwrittenUpdates } from "./unwritten-updates.js";

export type { UpdateFn } from "./store-changes.js";

export interface SessionStoreOptions {
  /** Absolute path of `sessions.json`. Transcripts live in the same directory. */
  path: string;
  logger: Logger;
  clock?: Clock;
  /** A file larger than this (bytes) is set aside unread, like one that does not parse. Default MAX_STORE_BYTES. */
  maxBytes?: number;
  /** Stale time of the cross-process lock in ms (default LOCK_STALE_MS). For tests. */
  lockStaleMs?: number;
}

export interface UpdateOptions {
  /**
   * Write-behind: the update may wait up to this long (ms, on the store's clock) to share one write with the
   * updates that follow it (see store-batches.ts). The returned promise settles once it is written. An update
   * without it, or `flush()`, writes every waiting one at once.
   */
  deferMs?: number;
}

/** `currentIfKnown`: the file must be read first. */
const UNREAD: unique symbol = Symbol("unread");

/** How often one update is re-read and re-applied because the file changed between its read and its rename. */
const MAX_WRITE_ATTEMPTS = 5;

/** The file is no longer the version that was read: read it again and re-apply (never write over it). */
class StoreChanged extends Error {}

/**
 * `sessions.json` (SPEC section 2). Invariants:
 * - reads never change the file, except to set aside a file that does not parse or is over `maxBytes` (then
 *   the last good copy, or a map rebuilt from the transcript headers, is renamed over it: the store is never
 *   missing, not even for a moment);
 * - `update` works under the cross-process lock on the file as it is on disk, changes its keys and writes
 *   atomically, so an edit made by hand (or by another process) to any other key is never overwritten with a
 *   stale copy; right before the rename it checks that the file is still the version it started from, and
 *   starts again from the file otherwise;
 * - the file is read again only when someone else may have written it: each write of ours stamps the file's
 *   mtime with a time in the past (store-write.ts stampTime), so (ino, size, mtime, ctime) equal to what we saw
 *   right after our rename proves that nobody wrote since; a version written by someone else is trusted that
 *   way as store-trust.ts says (before, an update compares its bytes again right before its rename);
 * - an update writes the file as the pieces of the old one around the entries it changed (no whole-file
 *   buffer), and the one copy of the file's bytes held, its parse and the usable map are patched the same way;
 *   after an outside edit only the entries between the common prefix and suffix are parsed (store-diff.ts);
 * - a file that does not parse is never treated as empty and overwritten: it is kept as
 *   `sessions.json.bad-<timestamp>` first;
 * - every entry given out has a valid `sessionId` (SESSION_ID_PATTERN) and a numeric `updatedAt`; entries that
 *   do not are left in the file untouched and skipped with a warning;
 * - maps given out have a null prototype: a key such as `constructor` or `__proto__` finds only an entry.
 */
export class SessionStore {
  readonly path: string;
  readonly dir: string;
  private readonly logger: Logger;
  private readonly clock: Clock;
  private readonly maxBytes: number;
  private readonly lockStaleMs: number;
  private parses = 0;
  private reads = 0;
  private tickMs = SAME_TICK_MS;
  /** Whether the store's file system gives each change a ctime of its own (store-fine-times.ts); probed once. */
  private fineTimes: boolean | undefined;
  /** The file as last read or written (see StoreImage). Undefined: no file (or none seen yet). */
  private image: StoreImage | undefined;
  /** The image a write in flight was planned on: a reader leaves it as it is and builds its own. */
  private writing: StoreImage | undefined;
  /**
   * The last content known to be good, kept when the file goes missing: a bad file that follows a deletion gets
   * this copy, never an empty store. While there is an image, its `raw` is the last good content.
   */
  private lastGood: RawStore | undefined;
  /** Serializes this instance's locked sections, so they do not spend their lock wait on each other. */
  private queue: Promise<unknown> = Promise.resolve();
  /** The unlocked read in progress (see current), shared by whoever needs the file meanwhile. */
  private reading: Promise<StoreImage | undefined> | undefined;
  /** The batches that new updates join (group commit and write-behind, see update). */
  private readonly batches: UpdateBatches<PendingUpdate>;
  /** This process's updates that the image does not hold yet (see UnwrittenUpdates). */
  private readonly unwritten = new UnwrittenUpdates();
  private readonly warned = new Set<string>();

  constructor(options: SessionStoreOptions) {
    this.path = options.path;
    this.dir = dirname(options.path);
    this.logger = options.logger;
    this.clock = options.clock ?? systemClock;
    this.maxBytes = options.maxBytes ?? MAX_STORE_BYTES;
    this.lockStaleMs = options.lockStaleMs ?? LOCK_STALE_MS;
    this.batches = new UpdateBatches(this.clock, (batch) => this.runBatch(batch));
  }

  /**
   * How many times file content was parsed (the whole file, or the entries an outside edit changed). Reading
   * an unchanged file (same version, or same bytes) does not parse.
   */
  get parseCount(): number {
    return this.parses;
  }

  /** How many times the whole file was read. While nobody else writes it, neither reads nor updates read it. */
  get readCount(): number {
    return this.reads;
  }

  /**
   * The current map. Read-only: while the file is unchanged every call returns the same object, and a map once
   * returned never changes (a later change makes a new one); copy an entry before changing it, and change the
   * store only through `update`. Missing file: an empty map.
   */
  async load(): Promise<SessionMap> {
    const image = await this.current();
    return image ? image.handOut() : emptyMap();
  }

  /** The usable entry of `key`, or undefined (the map has no prototype: `constructor` finds nothing). */
  async get(key: string): Promise<SessionEntry | undefined> {
    return (await this.current())?.map[key];
  }

  /**
   * The entry of `key` as this process's updates of it that are not written yet leave it: `get`'s entry with
   * their functions applied in order, as their write will apply them if nobody else writes the key first (an
   * update whose function throws is left out, as its write leaves it out). Read-only, like `get`'s. This is
   * what a reader in this process that must see its own updates uses instead of waiting for their write (the
   * session's next turn after a turn's write-behind update). Each function may so be called once more than
   * its write calls it, which `update` allows.
   */
  async getWithUpdates(key: string): Promise<SessionEntry | undefined> {
    // The image and the list read in one synchronous step: an update that lands in between (its rename) would
    // be in neither. A read of the file comes first when one is needed, then the image is found again.
    let image = this.currentIfKnown();
    for (let n = 0; image === UNREAD && n < 3; n++) {
      await this.current();
      image = this.currentIfKnown();
    }
    if (image === UNREAD) image = await this.current();
    return this.unwritten.apply(image, key, this.clock, this.path);
  }

  /**
   * Changes one key: under the lock, on the file as it is on disk (read again unless it provably is the version
   * held), applies `fn` to a copy of the current entry of `key` (undefined when absent or unusable; see
   * UpdateFn), and writes the file back atomically with every other key exactly as it is on disk. `fn`
   * returning undefined deletes the key. The stored entry must have a valid `sessionId` (SESSION_ID_INVALID
   * otherwise, nothing written); `updatedAt` is set to `clock.now()` unless `fn` set it to a new number.
   * Returns a copy of what was stored.
   *
   * `fn` may be called more than once: when the file changed between the read and the rename (a hand edit), the
   * write is dropped and `fn` is applied again to the file as it is now. Make it a function of `current` only.
   * With `deferMs` it is applied when its batch runs (up to that long later), on the file as it is then.
   */
  async update(key: string, fn: UpdateFn, options: UpdateOptions = {}): Promise<SessionEntry | undefined> {
    return new Promise((resolve, reject) => {
      const pending: PendingUpdate = { key, fn, resolve, reject };
      this.unwritten.add(pending);
      this.batches.add(pending, options.deferMs);
    });
  }

  /** Writes every deferred update now; resolves once every update made so far is written (or failed). */
  flush(): Promise<void> {
    return this.batches.flush();
  }

  /** How many deferred updates wait for their write. */
  get waitingUpdates(): number {
    return this.batches.waiting;
  }

  /** `<dir>/<sessionId>.jsonl`; throws SESSION_ID_INVALID for an id that must not become a file name. */
  transcriptPath(sessionId: string): string {
    return transcriptPathFor(this.dir, sessionId);
  }

  /**
   * Group commit: the updates queued in this process while the previous locked section ran (or while the lock
   * was awaited) form one batch, applied together, in order, under one lock and one atomic write. Each keeps its
   * own result (an update whose `fn` throws fails alone). When the batch cannot be committed (the lock cannot
   * be taken, the file cannot be read or written), exactly its own updates fail with that error; the next
   * update starts a new batch.
   */
  private async runBatch(batch: PendingUpdate[]): Promise<void> {
    const close = () => this.batches.close(batch);
    try {
      // Settled once the lock is released: whoever awaited an update never finds the store still locked by it.
      const settle = await this.exclusive(async (lock) => {
        close();
        return this.commit(batch, lock);
      });
      for (const done of settle) done();
    } catch (error) {
      close();
      this.unwritten.landed(batch);
      for (const u of batch) u.reject(error);
      this.logger.error("session store update failed", { path: this.path, error: describeError(error) });
    }
  }

  /** Applies `batch` to the file and writes it; returns how to settle each update (call once the lock is released). */
  private async commit(batch: PendingUpdate[], lock: HeldLock): Promise<(() => void)[]> {
    for (let attempt = 1; ; attempt++) {
      const image = await this.fresh(lock);
      const changes = noChanges();
      const settle: (() => void)[] = [];
      for (const u of batch) {
        try {
          const value = applyUpdate(image, changes, u.key, u.fn, this.clock.now(), this.path);
          settle.push(() => u.resolve(value));
        } catch (error) {
          settle.push(() => u.reject(error));
        }
      }
      if (changes.entries.size > 0) {
        try {
          await this.write(image, changes, lock, () => this.unwritten.landed(batch));
        } catch (error) {
          if (!(error instanceof StoreChanged)) throw error;
          if (attempt < MAX_WRITE_ATTEMPTS) continue;
          throw this.keptChanging();
        }
      } else {
        this.unwritten.landed(batch);
      }
      return settle;
    }
  }

  /**
   * The image of the file as it is now, without the lock (for load and get). A version seen as held is used
   * without reading (a version someone else wrote, within a clock tick of its ctime, too: it is read again once
   * that tick is over); a file that does not parse is set aside under the lock.
   */
  private async current(): Promise<StoreImage | undefined> {
    const known = this.currentIfKnown();
    if (known !== UNREAD) return known;
    // One read at a time: callers that find the file unread meanwhile (the first messages after a start, all at
    // once) share it, instead of each reading (and holding) the whole file.
    this.reading ??= this.readCurrent().finally(() => {
      this.reading = undefined;
    });
    return this.reading;
  }

  /**
   * `current` when it needs no read: the image held (or undefined: no file), found synchronously, so that
   * whatever the caller does with it in the same synchronous step sees the image and `unwritten` as one state.
   * UNREAD when the file must be read.
   */
  private currentIfKnown(): StoreImage | undefined | typeof UNREAD {
    // Synchronous: every message's `get` comes here, and a stat of a local file costs microseconds, less than a
    // round trip through the thread pool.
    const version = statStoreFileSync(this.path);
    if (version === undefined) return this.noteMissing();
    const held = this.image;
    if (held && sameVersion(held.version, version) && (held.trusted || this.recent(version))) return held;
    return UNREAD;
  }

  /** The rest of `current`: the file read, and adopted (or set aside under the lock). */
  private async readCurrent(): Promise<StoreImage | undefined> {
    // (What is read may be older than a write of ours that lands meanwhile: then the next access reads again.)
    const spliced = this.adoptAgainstHeld();
    if (spliced) return spliced;
    const read = await this.readBytes();
    if (!read.exists) return this.noteMissing();
    if (!read.tooLarge) {
      const adopted = this.adopt(read);
      if (typeof adopted !== "string") return adopted;
    }
    // Set the bad (or oversized) file aside under the lock, after checking again that it still is.
    return this.exclusive((lock) => this.fresh(lock));
  }

  /**
   * The image of the file as it is now, under the lock: read again unless its version is the one held and
   * trusted. A file that does not parse, or is over `maxBytes`, is replaced by the last good copy (or a rebuild
   * from the transcripts) before anything else happens. Undefined: no file.
   */
  private async fresh(lock: HeldLock): Promise<StoreImage | undefined> {
    for (let attempt = 1; ; attempt++) {
      // Synchronous: a stat of a path the kernel has cached takes microseconds, a threadpool trip far longer.
      const version = statStoreFileSync(this.path);
      if (version === undefined) return this.noteMissing();
      const held = this.image;
      if (held?.trusted && sameVersion(held.version, version)) return held;
      const spliced = this.adoptAgainstHeld();
      if (spliced) return spliced;
      const read = await this.readBytes();
      if (!read.exists) return this.noteMissing();
      let reason: string;
      if (read.tooLarge) {
        reason = tooLargeReason(read.version.size, this.maxBytes);
      } else {
        const adopted = this.adopt(read);
        if (typeof adopted !== "string") return adopted;
        reason = adopted;
      }
      try {
        return await this.replaceBadFile(read.version, reason, lock);
      } catch (error) {
        if (!(error instanceof StoreChanged)) throw error;
        if (attempt >= MAX_WRITE_ATTEMPTS) throw this.keptChanging();
      }
    }
  }

  /**
   * Makes the bytes just read the image: the same bytes as held keep the image (only its version moves); a
   * file still in the layout is patched from the held one (only the changed entries are parsed); anything
   * else is parsed whole. Returns why the file does not parse (the image is left as it was) instead.
   */
  private adopt(read: { version: FileVersion; bytes: Buffer; readAt: number }): StoreImage | string {
    const trusted = this.trustedAfterRead(read);
    const held = this.image;
    if (held?.bytes.equals(read.bytes)) {
      held.version = read.version;
      held.trusted = trusted;
      return held;
    }
    const layout = held?.knownLayout();
    if (held && layout) {
      const edit = diffStore(held.bytes, layout, read.bytes);
      if (edit.kind === "entries") {
        this.parses++;
        const next = { version: read.version, bytes: read.bytes, trusted };
        const { image, problems } = held.edited(edit, next, this.writing !== held);
        return this.install(image, problems);
      }
    }
    this.parses++;
    const text = utf8Text(read.bytes);
    const parsed = parseStoreText(text);
    if (!parsed.ok) return storeParseReason(text, parsed.reason);
    const raw = parsed.raw as RawStore;
    return this.install(
      StoreImage.parsed(read.version, read.bytes, raw, parsed.map, trusted),
      parsed.problems,
    );
  }

  /**
   * `adopt` for the usual outside edit, without a buffer the size of the file: the file is read against the bytes
   * held (store-splice.ts) and, when only whole entries in the layout changed, the held image is patched in
   * place. One synchronous step, so nothing changes the held bytes between the read and the patch; only while
   * no write of the held image is in flight (its pieces are views of those bytes). Undefined: read the file
   * whole (`readBytes` and `adopt`), as for anything else (no image in the layout, a reparse, a file that is
   * missing, too large or kept changing).
   */
  private adoptAgainstHeld(): StoreImage | undefined {
    const held = this.image;
    const layout = held?.knownLayout();
    if (!held || !layout || this.writing === held) return undefined;
    const read = readStoreSpliced(this.path, held.bytes, this.maxBytes);
    if (!read?.exists || read.tooLarge) return undefined;
    const trusted = this.trustedAfterRead(read);
    const edit = diffStore(held.bytes, layout, read.file);
    if (edit.kind === "reparse") return undefined;
    this.reads++;
    if (edit.kind === "same") {
      held.version = read.version;
      held.trusted = trusted;
      return held;
    }
    this.parses++;
    const bytes = read.file.patch(held.buffer);
    const { image, problems } = held.edited(edit, { version: read.version, bytes, trusted }, true);
    return this.install(image, problems);
  }

  /**
   * Whether a version just read may be trusted: any later change shows in the version when change times are fine
   * (its ctime was read), or when it was read a clock tick after its last change.
   */
  private trustedAfterRead(read: { version: FileVersion; readAt: number }): boolean {
    this.fineTimes ??= changeTimesAreFine(this.dir);
    return trustedAfterRead(read.version, read.readAt, this.fineTimes, this.tickMs);
  }

  private install(image: StoreImage, problems: EntryProblem[] | undefined): StoreImage {
    this.image = image;
    for (const problem of problems ?? []) {
      const id = `${problem.key}\0${problem.reason}`;
      if (this.warned.has(id)) continue;
      this.warned.add(id);
      this.logger.warn(
        `session store entry ${quoteId(problem.key)} skipped: ${problem.reason}; left in the file as it is`,
        { path: this.path },
      );
    }
    return image;
  }

  private async readBytes() {
    const read = await readStoreBytes(this.path, this.maxBytes, spareFor);
    if (read.exists && !read.tooLarge) this.reads++;
    return read;
  }

  private recent(version: FileVersion): boolean {
    return changedWithinTick(version, Date.now(), this.tickMs);
  }

  private noteMissing(): undefined {
    // A deleted file is a reset: nothing is held. The last good copy stays (see lastGood).
    if (this.image) this.lastGood = this.image.raw;
    this.image = undefined;
    return undefined;
  }

  private exclusive<T>(fn: (lock: HeldLock) => Promise<T>): Promise<T> {
    const run = this.queue.then(() =>
      withFileLock(this.path, this.logger, fn, { staleMs: this.lockStaleMs }),
    );
    this.queue = run.catch(() => {});
    return run;
  }

  /**
   * Writes `image` with `changes` applied (undefined image: no file), unless the file is no longer the image's
   * version right before the rename: then StoreChanged, nothing written. An edit saved by hand between the read
   * and the rename is so never written over; only one saved in the microseconds between this check and the
   * rename could be. A file in the layout is written as pieces of the old one around the changed entries, and
   * the image is patched in place right after the rename; any other is written whole, in the layout.
   * `landed` runs right after the rename, with the image's install (whether or not that succeeds).
   */
  private async write(
    image: StoreImage | undefined,
    changes: Changes,
    lock: HeldLock,
    landed: () => void,
  ): Promise<void> {
    const expected = image?.version;
    const layout = image?.knownLayout();
    const { entries, moved } = changes;
    const patch = image && layout && moved.size === 0 ? planPatch(image.bytes, layout, entries) : undefined;
    const checks: PiecesWrite = {
      stamp: true,
      beforeRename: () => this.beforeRename(lock, image),
      lastCheck: () => {
        const now = statStoreFileSync(this.path);
        if (!(expected === undefined ? now === undefined : sameVersion(now, expected)))
          throw new StoreChanged();
      },
    };
    this.writing = image;
    try {
      if (image && patch) {
        await writePiecesAtomic(this.path, piecesOf(image.buffer, patch.segments), {
          ...checks,
          renamed: (version, stamped) => {
            try {
              this.afterRename(version, stamped, () => {
                image.buffer = applySegments(image.buffer, patch.segments, patch.size);
                image.size = patch.size;
                patch.relayout(image.layout as Layout);
                return { image, problems: image.change(entries) };
              });
            } finally {
              landed();
            }
          },
        });
      } else {
        const raw = image ? nullPrototypeCopy(image.raw) : (Object.create(null) as RawStore);
        for (const [key, value] of entries) {
          if (value === undefined || moved.has(key)) delete raw[key];
          if (value !== undefined) setOwn<Record<string, unknown>>(raw, key, value);
        }
        await this.writeWhole(raw, checks, landed);
      }
    } finally {
      if (this.writing === image) this.writing = undefined;
    }
  }

  /** Writes `raw` whole, in the layout; the new image is installed right after the rename, then `landed` runs. */
  private async writeWhole(raw: RawStore, checks: PiecesWrite, landed?: () => void): Promise<void> {
    const whole = wholeFile(raw);
    await writePiecesAtomic(this.path, [whole.buffer.subarray(0, whole.size)], {
      ...checks,
      renamed: (version, stamped) => {
        try {
          this.afterRename(version, stamped, () => StoreImage.written(whole, raw));
        } finally {
          landed?.();
        }
      },
    });
  }

  /**
   * Right after our rename (synchronously, so that no reader of this process sees the new file before the
   * image): the image becomes `build()`'s, with the version of the file we renamed. If building it fails, no
   * image is kept (the next access reads the file, which is in place).
   */
  private afterRename(
    version: FileVersion | undefined,
    stamped: boolean,
    build: () => { image: StoreImage; problems: EntryProblem[] | undefined },
  ): void {
    if (version !== undefined && !stamped) this.tickMs = COARSE_TICK_MS;
    try {
      const { image, problems } = build();
      image.version = version ?? UNKNOWN_VERSION;
      image.trusted = stamped;
      this.install(image, problems);
    } catch (error) {
      this.noteMissing();
      throw error;
    }
  }

  /**
   * Before the rename: the lock is still ours, and, for a version someone else wrote within a clock tick (an
   * in-place save of the same size in that tick leaves its version as it was), the bytes are still the ones
   * the update started from.
   */
  private async beforeRename(lock: HeldLock, image: StoreImage | undefined): Promise<void> {
    await lock.assertHeld();
    if (image === undefined || image.trusted) return;
    const now = await statStoreFile(this.path);
    if (now === undefined || !this.recent(now) || !sameVersion(now, image.version)) return;
    // Compared through one small buffer (store-splice.ts): no buffer the size of the file.
    this.reads++;
    let same = false;
    try {
      same = fileHolds(this.path, image.bytes);
    } catch {
      // Unreadable now: not provably the version held.
    }
    if (!same) throw new StoreChanged();
  }

  /**
   * Keeps the bad file (at `version`) as `sessions.json.bad-<timestamp>` and renames the last good copy (or a
   * rebuild from the transcript headers) over it. Throws StoreChanged when the file changed meanwhile (nothing
   * is kept then).
   */
  private async replaceBadFile(version: FileVersion, reason: string, lock: HeldLock): Promise<StoreImage> {
    let kept: Awaited<ReturnType<typeof keepBadCopy>>;
    try {
      kept = await keepBadCopy(this.path, version, this.clock.now());
    } catch (error) {
      throw new ClawdisError(
        "STORE_CORRUPT",
        `the session store ${this.path} is not usable (${reason}) and could not be set aside (${describeError(error)}); nothing was written. Move it away by hand`,
        { cause: error },
      );
    }
    if (kept === undefined) throw new StoreChanged();
    const { raw, carried } = await replacementFor(this.image?.raw ?? this.lastGood, this.dir);
    try {
      await this.writeWhole(raw, {
        stamp: true,
        beforeRename: () => lock.assertHeld(),
        lastCheck: () => {
          if (!sameVersion(statStoreFileSync(this.path), kept.version)) throw new StoreChanged();
        },
      });
    } catch (error) {
      await unlink(kept.target).catch(() => {});
      throw error;
    }
    this.logger.warn(
      `session store is not usable (${reason}); set it aside as ${kept.target} and ${carried}`,
      {
        path: this.path,
      },
    );
    return this.image as StoreImage;
  }

  private keptChanging(): ClawdisError {
    return new ClawdisError(
      "STORE_LOCKED",
      `the session store ${this.path} changed ${MAX_WRITE_ATTEMPTS} times while an update was being written (edited by hand in a loop?); the update was not written, the file was left as it is`,
    );
  }
}

function emptyMap(): SessionMap {
  return Object.create(null) as SessionMap;
}
