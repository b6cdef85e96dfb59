import { rename } from "node:fs/promises";
import { dirname } from "node:path";
import { type Clock, systemClock } from "../core/clock.js";
import { ClawdisError, describeError } from "../core/errors.js";
import type { Logger } from "../core/logger.js";
import { pathExists } from "../core/path-exists.js";
import { quoteId, transcriptPathFor, whyInvalid } from "./session-id.js";
import { type HeldLock, withFileLock } from "./store-lock.js";
import { type LineCache, parseStoreText, serializeStoreBytes, setOwn, usableEntries } from "./store-parse.js";
import { type FileVersion, readStoreBytes, sameVersion, statStoreFile } from "./store-read.js";
import { rebuildFromTranscripts } from "./store-rebuild.js";
import { writeFileAtomic } from "./store-write.js";
import type { SessionEntry, SessionMap } from "./types.js";

export interface SessionStoreOptions {
  /** Absolute path of `sessions.json`. Transcripts live in the same directory. */
  path: string;
  logger: Logger;
  clock?: Clock;
}

interface PendingUpdate {
  key: string;
  fn: (current: SessionEntry | undefined) => SessionEntry | undefined;
  resolve: (entry: SessionEntry | undefined) => void;
  reject: (error: unknown) => void;
}

/** The file's object as parsed: every key, usable or not (see store-parse.ts). */
type RawStore = Record<string, Record<string, unknown>>;

/**
 * `sessions.json` (SPEC section 2). Invariants:
 * - reads never change the file, except to set aside a file that does not parse (then the last good copy, or a
 *   map rebuilt from the transcript headers, is written in its place);
 * - `update` re-reads the file under the cross-process lock, changes one key and writes atomically, so an edit
 *   made by hand (or by another process) to any other key is never overwritten with a stale copy;
 * - a file that does not parse is never treated as empty and overwritten: it is renamed to
 *   `sessions.json.bad-<timestamp>` first;
 * - every entry given out has a valid `sessionId` (SESSION_ID_PATTERN) and a numeric `updatedAt`; entries that
 *   do not are left in the file untouched and skipped with a warning.
 */
export class SessionStore {
  readonly path: string;
  readonly dir: string;
  private readonly logger: Logger;
  private readonly clock: Clock;
  private parses = 0;
  /**
   * The file as last read or written: its version, its exact bytes and their parse. `map` (the usable entries)
   * is derived on first use. Entry objects in `raw` are never changed in place: an update replaces the entry.
   */
  private cache: { version: FileVersion; bytes: Buffer; raw: RawStore; map?: SessionMap } | undefined;
  /** The last content known to be good (parsed or written by us); used when the file turns out bad. */
  private lastGood: RawStore | undefined;
  /** Encoded line per entry object, so that rewriting 10,000 entries encodes only the changed one. */
  private readonly lines: LineCache = new WeakMap();
  /** Serializes this instance's locked sections, so they do not spend their lock retries on each other. */
  private queue: Promise<unknown> = Promise.resolve();
  /** Updates waiting for the next group commit (see scheduleBatch). */
  private pending: PendingUpdate[] = [];
  private batchScheduled = false;
  private readonly warned = new Set<string>();

  constructor(options: SessionStoreOptions) {
    this.path = options.path;
    this.dir = dirname(options.path);
    this.logger = options.logger;
    this.clock = options.clock ?? systemClock;
  }

  /** How many times the file was parsed. Reading an unchanged file (same version, or same bytes) does not parse. */
  get parseCount(): number {
    return this.parses;
  }

  /**
   * The current map. Read-only: while the file is unchanged every call returns the same object; copy an entry
   * before changing it, and change the store only through `update`. Missing file: `{}`.
   */
  async load(): Promise<SessionMap> {
    const version = await statStoreFile(this.path);
    if (version === undefined) return this.noteMissing();
    if (this.cache && sameVersion(this.cache.version, version)) return this.mapOf(this.cache);
    const read = await readStoreBytes(this.path);
    if (!read.exists) return this.noteMissing();
    if (this.cache?.bytes.equals(read.bytes)) {
      this.cache.version = read.version;
      return this.mapOf(this.cache);
    }
    this.parses++;
    const parsed = parseStoreText(read.bytes.toString("utf8"));
    if (parsed.ok) return this.mapOf(this.remember(read.version, read.bytes, parsed.raw as RawStore));
    // Set the bad file aside under the lock, after checking again that it is still bad.
    await this.exclusive((lock) => this.readFresh(lock));
    return this.cache ? this.mapOf(this.cache) : {};
  }

  async get(key: string): Promise<SessionEntry | undefined> {
    return (await this.load())[key];
  }

  /**
   * Changes one key: under the lock, re-reads the file (not the cache), applies `fn` to a copy of the current
   * entry of `key` (undefined when absent or unusable), and writes the file back atomically with every other key
   * exactly as it is on disk. `fn` returning undefined deletes the key. The stored entry must have a valid
   * `sessionId` (SESSION_ID_INVALID otherwise, nothing written); `updatedAt` is set to `clock.now()` unless `fn`
   * set it to a new number. Returns a copy of what was stored.
   */
  async update(
    key: string,
    fn: (current: SessionEntry | undefined) => SessionEntry | undefined,
  ): Promise<SessionEntry | undefined> {
    return new Promise((resolve, reject) => {
      this.pending.push({ key, fn, resolve, reject });
      this.scheduleBatch();
    });
  }

  /**
   * Group commit: the updates queued in this process while the previous locked section ran are applied together,
   * in order, under one lock, one re-read and one atomic write. Each keeps its own result (an update that throws
   * fails alone). Under load this turns N lock + read + write cycles into one.
   */
  private scheduleBatch(): void {
    if (this.batchScheduled) return;
    this.batchScheduled = true;
    void this.exclusive(async (lock) => {
      this.batchScheduled = false;
      const batch = this.pending.splice(0);
      const settle: (() => void)[] = [];
      try {
        const raw = await this.readFresh(lock);
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
        if (changed) await this.write(raw, lock);
      } catch (error) {
        for (const u of batch) u.reject(error);
        return;
      }
      for (const done of settle) done();
    }).catch((error: unknown) => {
      // The lock itself could not be taken: everything queued fails with that error.
      for (const u of this.pending.splice(0)) u.reject(error);
      this.logger.error("session store update failed", { path: this.path, error: describeError(error) });
    });
  }

  /** One update applied to `raw` (changed in place). Throws SESSION_ID_INVALID, or whatever `fn` throws. */
  private applyUpdate(
    raw: RawStore,
    key: string,
    fn: (current: SessionEntry | undefined) => SessionEntry | undefined,
  ): { value: SessionEntry | undefined; changed: boolean } {
    const existing = Object.hasOwn(raw, key) ? raw[key] : undefined;
    const current = existing ? usableEntries({ [key]: existing }).map[key] : undefined;
    const next = fn(current ? jsonCopy(current) : undefined);
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
    // A deleted file is a reset: the empty store is now the good copy.
    this.cache = undefined;
    this.lastGood = {};
    return {};
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
    const run = this.queue.then(() => withFileLock(this.path, this.logger, fn));
    this.queue = run.catch(() => {});
    return run;
  }

  /**
   * Reads the file under the lock, bypassing the cache (only the parse is skipped when the bytes are exactly
   * the ones last read or written). A file that does not parse is set aside and replaced by the last good copy
   * (or a rebuild from the transcripts) before anything else happens. Returns a copy of the top-level object
   * that the caller may change (entries themselves are replaced, never edited).
   */
  private async readFresh(lock: HeldLock): Promise<RawStore> {
    const read = await readStoreBytes(this.path);
    if (!read.exists) {
      this.noteMissing();
      return {};
    }
    if (this.cache?.bytes.equals(read.bytes)) {
      this.cache.version = read.version;
      return { ...this.cache.raw };
    }
    this.parses++;
    const parsed = parseStoreText(read.bytes.toString("utf8"));
    if (parsed.ok) {
      const raw = parsed.raw as RawStore;
      this.remember(read.version, read.bytes, raw);
      return { ...raw };
    }
    const aside = await this.setAside();
    let base: RawStore;
    if (this.lastGood) {
      base = structuredClone(this.lastGood);
      this.logger.warn(
        `session store did not parse (${parsed.reason}); set it aside as ${aside} and carried on with the last good copy (${Object.keys(base).length} sessions)`,
        { path: this.path },
      );
    } else {
      const rebuilt = await rebuildFromTranscripts(this.dir);
      base = rebuilt.map as RawStore;
      this.logger.warn(
        `session store did not parse (${parsed.reason}); set it aside as ${aside} and rebuilt ${Object.keys(base).length} sessions from ${rebuilt.scanned} transcript headers`,
        { path: this.path },
      );
    }
    await this.write(base, lock);
    return { ...base };
  }

  /** Renames the bad file to `sessions.json.bad-<timestamp>`; never overwrites an earlier one. */
  private async setAside(): Promise<string> {
    const stamp = new Date(this.clock.now()).toISOString().replace(/[:.]/g, "-");
    let target = `${this.path}.bad-${stamp}`;
    for (let n = 1; await pathExists(target); n++) target = `${this.path}.bad-${stamp}-${n}`;
    try {
      await rename(this.path, target);
    } catch (error) {
      throw new ClawdisError(
        "STORE_CORRUPT",
        `the session store ${this.path} does not parse and could not be set aside (${describeError(error)}); nothing was written. Move it away by hand`,
        { cause: error },
      );
    }
    return target;
  }

  private async write(raw: RawStore, lock: HeldLock): Promise<void> {
    const bytes = serializeStoreBytes(raw, this.lines);
    const version = await writeFileAtomic(this.path, bytes, () => lock.assertHeld());
    this.remember(version, bytes, raw);
  }
}

/** A deep copy through JSON: what the file holds for this value. */
function jsonCopy<T>(value: T): T {
  return JSON.parse(JSON.stringify(value)) as T;
}
