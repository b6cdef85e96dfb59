import { readFile, unlink } from "node:fs/promises";
import { dirname } from "node:path";
import { type Clock, systemClock } from "../core/clock.js";
import { ClawdisError, describeError } from "../core/errors.js";
import type { Logger } from "../core/logger.js";
import { quoteId, transcriptPathFor, whyInvalid } from "./session-id.js";
import { type HeldLock, LOCK_STALE_MS, withFileLock } from "./store-lock.js";
import {
  type LineCache,
  nullPrototypeCopy,
  parseStoreText,
  serializeStoreBytes,
  setOwn,
  storeParseReason,
  usableEntries,
  usableEntry,
} from "./store-parse.js";
import {
  type FileVersion,
  MAX_STORE_BYTES,
  readStoreBytes,
  sameVersion,
  statStoreFile,
  statStoreFileSync,
  tooLargeReason,
} from "./store-read.js";
import { rebuildFromTranscripts } from "./store-rebuild.js";
import { keepBadCopy } from "./store-set-aside.js";
import { writeFileAtomic } from "./store-write.js";
import type { SessionEntry, SessionMap } from "./types.js";

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

/**
 * The change of one key (see `SessionStore.update`). `current` is a copy of the usable entry, or undefined;
 * `unusable` is a copy of the file's entry when the key is there but its entry is not usable (its sessionId is
 * refused), so that a replacement can keep its other fields. Never an entry to use as it is.
 */
export type UpdateFn = (
  current: SessionEntry | undefined,
  unusable?: Readonly<Record<string, unknown>>,
) => SessionEntry | undefined;

interface PendingUpdate {
  key: string;
  fn: UpdateFn;
  resolve: (entry: SessionEntry | undefined) => void;
  reject: (error: unknown) => void;
}

/** How often one update is re-read and re-applied because the file changed between its read and its rename. */
const MAX_WRITE_ATTEMPTS = 5;

/** The file is no longer the version that was read: read it again and re-apply (never write over it). */
class StoreChanged extends Error {}

/** File system timestamps come from a coarse clock (a few ms); a change within this of now may not show in mtime. */
const SAME_TICK_MS = 100;

function isRecent(version: FileVersion): boolean {
  return Number(version.mtimeNs / 1_000_000n) > Date.now() - SAME_TICK_MS;
}

/** The file's object as parsed: every key, usable or not (see store-parse.ts). */
type RawStore = Record<string, Record<string, unknown>>;

/**
 * `sessions.json` (SPEC section 2). Invariants:
 * - reads never change the file, except to set aside a file that does not parse or is over `maxBytes` (then
 *   the last good copy, or a map rebuilt from the transcript headers, is renamed over it: the store is never
 *   missing, not even for a moment);
 * - `update` re-reads the file under the cross-process lock, changes one key and writes atomically, so an edit
 *   made by hand (or by another process) to any other key is never overwritten with a stale copy; right before
 *   the rename it checks that the file is still the one it read, and starts again from the file otherwise;
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
  /**
   * The file as last read or written: its version, its exact bytes and their parse. `map` (the usable entries)
   * is derived on first use. Entry objects in `raw` are never changed in place: an update replaces the entry.
   */
  private cache: { version: FileVersion; bytes: Buffer; raw: RawStore; map?: SessionMap } | undefined;
  /**
   * The last content known to be good (parsed or written by us); used when the file turns out bad. A file found
   * missing does not change it: a bad file that follows a deletion gets this copy, never an empty store.
   */
  private lastGood: RawStore | undefined;
  /** Encoded line per entry object, so that rewriting 10,000 entries encodes only the changed one. */
  private readonly lines: LineCache = new WeakMap();
  /** Serializes this instance's locked sections, so they do not spend their lock wait on each other. */
  private queue: Promise<unknown> = Promise.resolve();
  /** The batch that new updates join: its locked section has not started yet (see update). */
  private open: PendingUpdate[] | undefined;
  private readonly warned = new Set<string>();

  constructor(options: SessionStoreOptions) {
    this.path = options.path;
    this.dir = dirname(options.path);
    this.logger = options.logger;
    this.clock = options.clock ?? systemClock;
    this.maxBytes = options.maxBytes ?? MAX_STORE_BYTES;
    this.lockStaleMs = options.lockStaleMs ?? LOCK_STALE_MS;
  }

  /** How many times the file was parsed. Reading an unchanged file (same version, or same bytes) does not parse. */
  get parseCount(): number {
    return this.parses;
  }

  /**
   * The current map. Read-only: while the file is unchanged every call returns the same object; copy an entry
   * before changing it, and change the store only through `update`. Missing file: an empty map.
   */
  async load(): Promise<SessionMap> {
    const version = await statStoreFile(this.path);
    if (version === undefined) return this.noteMissing();
    if (this.cache && sameVersion(this.cache.version, version)) return this.mapOf(this.cache);
    const read = await readStoreBytes(this.path, this.maxBytes);
    if (!read.exists) return this.noteMissing();
    if (!read.tooLarge) {
      if (this.cache?.bytes.equals(read.bytes)) {
        this.cache.version = read.version;
        return this.mapOf(this.cache);
      }
      this.parses++;
      const parsed = parseStoreText(read.bytes.toString("utf8"));
      if (parsed.ok) return this.mapOf(this.remember(read.version, read.bytes, parsed.raw as RawStore));
    }
    // Set the bad (or oversized) file aside under the lock, after checking again that it still is.
    await this.exclusive((lock) => this.readFresh(lock));
    return this.cache ? this.mapOf(this.cache) : emptyMap();
  }

  /** The usable entry of `key`, or undefined (the map has no prototype: `constructor` finds nothing). */
  async get(key: string): Promise<SessionEntry | undefined> {
    return (await this.load())[key];
  }

  /**
   * Changes one key: under the lock, re-reads the file (not the cache), applies `fn` to a copy of the current
   * entry of `key` (undefined when absent or unusable; see UpdateFn), and writes the file back atomically with
   * every other key exactly as it is on disk. `fn` returning undefined deletes the key. The stored entry must
   * have a valid `sessionId` (SESSION_ID_INVALID otherwise, nothing written); `updatedAt` is set to
   * `clock.now()` unless `fn` set it to a new number. Returns a copy of what was stored.
   *
   * `fn` may be called more than once: when the file changed between the read and the rename (a hand edit), the
   * write is dropped and `fn` is applied again to the file as it is now. Make it a function of `current` only.
   */
  async update(key: string, fn: UpdateFn): Promise<SessionEntry | undefined> {
    return new Promise((resolve, reject) => {
      let batch = this.open;
      if (batch === undefined) {
        batch = [];
        this.open = batch;
        void this.runBatch(batch);
      }
      batch.push({ key, fn, resolve, reject });
    });
  }

  /**
   * Group commit: the updates queued in this process while the previous locked section ran (or while the lock
   * was awaited) form one batch, applied together, in order, under one lock, one re-read and one atomic write.
   * Each keeps its own result (an update whose `fn` throws fails alone). When the batch cannot be committed (the
   * lock cannot be taken, the file cannot be read or written), exactly its own updates fail with that error;
   * the next update starts a new batch.
   */
  private async runBatch(batch: PendingUpdate[]): Promise<void> {
    const close = () => {
      if (this.open === batch) this.open = undefined;
    };
    try {
      await this.exclusive(async (lock) => {
        close();
        await this.commit(batch, lock);
      });
    } catch (error) {
      close();
      for (const u of batch) u.reject(error);
      this.logger.error("session store update failed", { path: this.path, error: describeError(error) });
    }
  }

  /** Applies `batch` to the file and writes it; settles each update only once the write is done. */
  private async commit(batch: PendingUpdate[], lock: HeldLock): Promise<void> {
    for (let attempt = 1; ; attempt++) {
      const { raw, version } = await this.readFresh(lock);
      const settle: (() => void)[] = [];
      let changed = false;
      for (const u of batch) {
        try {
          const result = this.applyUpdate(raw, u.key, u.fn);
          changed ||= result.changed;
          settle.push(() => u.resolve(result.value));
        } catch (error) {
          settle.push(() => u.reject(error));
        }
      }
      if (changed) {
        try {
          await this.write(raw, lock, version);
        } catch (error) {
          if (!(error instanceof StoreChanged)) throw error;
          if (attempt < MAX_WRITE_ATTEMPTS) continue;
          throw this.keptChanging();
        }
      }
      for (const done of settle) done();
      return;
    }
  }

  /** One update applied to `raw` (changed in place). Throws SESSION_ID_INVALID, or whatever `fn` throws. */
  private applyUpdate(
    raw: RawStore,
    key: string,
    fn: UpdateFn,
  ): { value: SessionEntry | undefined; changed: boolean } {
    const existing = Object.hasOwn(raw, key) ? raw[key] : undefined;
    const current = existing ? usableEntry(existing).entry : undefined;
    const next = current ? fn(jsonCopy(current)) : fn(undefined, existing && jsonCopy(existing));
    if (next === undefined) {
      if (current === undefined) return { value: undefined, changed: false };
      delete raw[key];
      return { value: undefined, changed: true };
    }
    const why = whyInvalid(next.sessionId);
    if (why !== undefined) {
      throw new ClawdisError(
        "SESSION_ID_INVALID",
        `refused to store session ${quoteId(key)}: session id ${quoteId(next.sessionId)} is invalid (${why}); nothing was written to ${this.path}`,
      );
    }
    const keep =
      typeof next.updatedAt === "number" &&
      Number.isFinite(next.updatedAt) &&
      next.updatedAt !== current?.updatedAt;
    // Stored as its JSON form, shared with no caller: exactly what a re-read of the file would give.
    const stored: SessionEntry = jsonCopy({ ...next, updatedAt: keep ? next.updatedAt : this.clock.now() });
    setOwn<Record<string, unknown>>(raw, key, stored);
    return { value: jsonCopy(stored), changed: true };
  }

  /** `<dir>/<sessionId>.jsonl`; throws SESSION_ID_INVALID for an id that must not become a file name. */
  transcriptPath(sessionId: string): string {
    return transcriptPathFor(this.dir, sessionId);
  }

  private noteMissing(): SessionMap {
    // A deleted file is a reset: nothing is cached. The last good copy stays (see lastGood).
    this.cache = undefined;
    return emptyMap();
  }

  private remember(version: FileVersion, bytes: Buffer, raw: RawStore): { raw: RawStore; map?: SessionMap } {
    this.cache = { version, bytes, raw };
    this.lastGood = raw;
    return this.cache;
  }

  private mapOf(cache: { raw: RawStore; map?: SessionMap }): SessionMap {
    if (cache.map) return cache.map;
    const { map, problems } = usableEntries(cache.raw);
    for (const problem of problems) {
      const id = `${problem.key}\0${problem.reason}`;
      if (this.warned.has(id)) continue;
      this.warned.add(id);
      this.logger.warn(
        `session store entry ${quoteId(problem.key)} skipped: ${problem.reason}; left in the file as it is`,
        { path: this.path },
      );
    }
    cache.map = map;
    return map;
  }

  private exclusive<T>(fn: (lock: HeldLock) => Promise<T>): Promise<T> {
    const run = this.queue.then(() =>
      withFileLock(this.path, this.logger, fn, { staleMs: this.lockStaleMs }),
    );
    this.queue = run.catch(() => {});
    return run;
  }

  /**
   * Reads the file under the lock, bypassing the cache (only the parse is skipped when the bytes are exactly
   * the ones last read or written). A file that does not parse, or is over `maxBytes`, is replaced by the last
   * good copy (or a rebuild from the transcripts) before anything else happens. Returns a copy of the top-level
   * object that the caller may change (entries themselves are replaced, never edited), and the version it was
   * read from (undefined: no file).
   */
  private async readFresh(lock: HeldLock): Promise<{ raw: RawStore; version: FileVersion | undefined }> {
    for (let attempt = 1; ; attempt++) {
      const read = await readStoreBytes(this.path, this.maxBytes);
      if (!read.exists) return { raw: this.noteMissing() as RawStore, version: undefined };
      let reason: string;
      if (read.tooLarge) {
        reason = tooLargeReason(read.version.size, this.maxBytes);
      } else {
        if (this.cache?.bytes.equals(read.bytes)) {
          this.cache.version = read.version;
          return { raw: nullPrototypeCopy(this.cache.raw), version: read.version };
        }
        this.parses++;
        const parsed = parseStoreText(read.bytes.toString("utf8"));
        if (parsed.ok) {
          const raw = parsed.raw as RawStore;
          this.remember(read.version, read.bytes, raw);
          return { raw: nullPrototypeCopy(raw), version: read.version };
        }
        reason = storeParseReason(read.bytes.toString("utf8"), parsed.reason);
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
   * Keeps the bad file (at `version`) as `sessions.json.bad-<timestamp>` and renames the last good copy (or a
   * rebuild from the transcript headers) over it. Throws StoreChanged when the file changed meanwhile (nothing
   * is kept then).
   */
  private async replaceBadFile(
    version: FileVersion,
    reason: string,
    lock: HeldLock,
  ): Promise<{ raw: RawStore; version: FileVersion }> {
    let aside: string | undefined;
    try {
      aside = await keepBadCopy(this.path, version, this.clock.now());
    } catch (error) {
      throw new ClawdisError(
        "STORE_CORRUPT",
        `the session store ${this.path} is not usable (${reason}) and could not be set aside (${describeError(error)}); nothing was written. Move it away by hand`,
        { cause: error },
      );
    }
    if (aside === undefined) throw new StoreChanged();
    let base: RawStore;
    let carried: string;
    if (this.lastGood) {
      base = nullPrototypeCopy(this.lastGood);
      carried = `carried on with the last good copy (${Object.keys(base).length} sessions)`;
    } else {
      const rebuilt = await rebuildFromTranscripts(this.dir);
      base = rebuilt.map as RawStore;
      carried = `rebuilt ${Object.keys(base).length} sessions from ${rebuilt.scanned} transcript headers`;
    }
    try {
      await this.write(base, lock, version);
    } catch (error) {
      await unlink(aside).catch(() => {});
      throw error;
    }
    this.logger.warn(`session store is not usable (${reason}); set it aside as ${aside} and ${carried}`, {
      path: this.path,
    });
    return { raw: nullPrototypeCopy(base), version: (this.cache as { version: FileVersion }).version };
  }

  /**
   * Writes `raw` atomically, unless the file is no longer `expected` (undefined: no file) right before the
   * rename: then StoreChanged, nothing written. An edit saved by hand between the read and the rename is so
   * never written over; only one saved in the microseconds between this check and the rename could be.
   */
  private async write(raw: RawStore, lock: HeldLock, expected: FileVersion | undefined): Promise<void> {
    const bytes = serializeStoreBytes(raw, this.lines);
    const version = await writeFileAtomic(
      this.path,
      bytes,
      async () => {
        await lock.assertHeld();
        // An in-place edit of the same size within one tick of the file system's clock leaves inode, size and
        // mtime as they were: while the file's mtime is that recent, compare the bytes too.
        const now = await statStoreFile(this.path);
        if (now !== undefined && isRecent(now) && this.cache && sameVersion(this.cache.version, now)) {
          const current = await readFile(this.path).catch(() => undefined);
          if (current === undefined || !current.equals(this.cache.bytes)) throw new StoreChanged();
        }
      },
      // Last, synchronously right before the rename: the file is still the version this update read.
      () => {
        const now = statStoreFileSync(this.path);
        const unchanged = expected === undefined ? now === undefined : sameVersion(now, expected);
        if (!unchanged) throw new StoreChanged();
      },
    );
    this.remember(version, bytes, raw);
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

/** A deep copy through JSON: what the file holds for this value. */
function jsonCopy<T>(value: T): T {
  return JSON.parse(JSON.stringify(value)) as T;
}
