import { randomBytes } from "node:crypto";
import * as fs from "node:fs";
import { rename, rmdir, unlink } from "node:fs/promises";
import { dirname, join } from "node:path";
import { ClawdisError, describeError } from "../core/errors.js";
import type { Logger } from "../core/logger.js";
import {
  isOwnerDead,
  type LockOwner,
  OWNER_FILE,
  ownerForThisProcess,
  readLockOwner,
  readLockTokenSync,
} from "./lock-owner.js";
import { remakeFolder } from "./remake-folder.js";
import { writeAll } from "./transcript.js";

type ProperLockOptions = NonNullable<Parameters<typeof import("proper-lockfile").lock>[1]>;

/** How often taking the lock makes the store's folder again before it gives up. */
const FOLDER_GONE_ATTEMPTS = 3;

/** How long a lock whose owner cannot be judged (see isOwnerDead) blocks others before it is taken over. */
export const LOCK_STALE_MS = 10_000;

/**
 * How long a caller waits for the lock before STORE_LOCKED: always longer than the stale time, so that a lock
 * left by a killed process is taken over by the waiting update instead of failing it.
 */
export function lockWaitMs(staleMs: number): number {
  return staleMs + 5_000;
}

export interface FileLockOptions {
  /** Stale time of the lock in ms (default LOCK_STALE_MS; proper-lockfile's minimum is 2000). For tests. */
  staleMs?: number;
}

/**
 * A held lock. `assertHeld()` rejects once the lock is no longer this holder's: proper-lockfile reported it
 * compromised, or the lock directory no longer holds this holder's owner record (another process took it
 * over). A write calls it right before its rename, so a writer that lost the lock writes nothing.
 */
export interface HeldLock {
  assertHeld(): Promise<void>;
}

/**
 * Runs `fn` while holding the cross-process lock of `path`: the directory `<path>.lock` (proper-lockfile), with
 * `owner.json` inside naming the holder (pid, host, start time; see lock-owner.ts). Contract:
 * - the directory of `path` is created (0700) when it is missing;
 * - a lock whose owner is certainly dead (isOwnerDead) is taken over at once; any other lock is taken over when
 *   its mtime is older than the stale time (the holder refreshes it while alive); the caller waits at most
 *   `lockWaitMs(staleMs)` and then gets STORE_LOCKED;
 * - the lock is released in `finally`, also when `fn` throws, and only if it is still this holder's.
 * proper-lockfile is imported on first use so that read-only commands never load it.
 */
/** Loads proper-lockfile now (the first store update would): a gateway's start does, before its first sends. */
export async function preloadLockLibrary(): Promise<void> {
  await import("proper-lockfile");
}

export async function withFileLock<T>(
  path: string,
  logger: Logger,
  fn: (lock: HeldLock) => Promise<T>,
  options: FileLockOptions = {},
): Promise<T> {
  const { lock } = await import("proper-lockfile");
  const staleMs = options.staleMs ?? LOCK_STALE_MS;
  const lockDir = `${path}.lock`;
  const owner = ownerForThisProcess(Date.now());
  const state = { acquired: false };
  let lost: Error | undefined;
  const lockOptions: ProperLockOptions = {
    realpath: false,
    retries: 0,
    stale: staleMs,
    fs: ownerRecordingFs(lockDir, owner, state),
    onCompromised: (error) => {
      // The default handler throws from a timer and kills the process; record it and refuse to write instead.
      lost = error;
      logger.error("lost the session store lock; the write in progress is abandoned", {
        path,
        error: describeError(error),
      });
    },
  };
  const deadline = Date.now() + lockWaitMs(staleMs);
  let release: (() => Promise<void>) | undefined;
  /** How often the store's folder was made again (it may be deleted again meanwhile: a reset). */
  let madeDir = 0;
  for (let attempt = 0; release === undefined; attempt++) {
    try {
      release = await lock(path, lockOptions);
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      if (code === "ENOENT" && madeDir < FOLDER_GONE_ATTEMPTS) {
        madeDir++;
        await remakeFolder(dirname(path));
        continue;
      }
      if (code !== "ELOCKED") {
        throw new ClawdisError("IO", `cannot lock the session store ${path}: ${describeError(error)}`, {
          cause: error,
        });
      }
      if (await takeOverFromDeadOwner(lockDir, path, logger)) continue;
      if (Date.now() >= deadline) {
        throw new ClawdisError(
          "STORE_LOCKED",
          `the session store ${path} stayed locked by another process (${lockDir}) for ${Math.round(lockWaitMs(staleMs) / 1000)} s. A lock left by a process that is no longer running is taken over at once, any other after ${Math.round(staleMs / 1000)} s without a refresh`,
          { cause: error },
        );
      }
      await delay(Math.min(100, 5 * 1.5 ** attempt) * (0.5 + Math.random()));
    }
  }
  state.acquired = true;
  const held: HeldLock = {
    assertHeld: async () => {
      // Read synchronously: a few microseconds, where an asynchronous read takes four thread pool round trips.
      if (!lost && readLockTokenSync(lockDir) !== owner.token) {
        lost = new Error(`${lockDir} no longer holds this process's owner record`);
      }
      if (lost) {
        throw new ClawdisError(
          "STORE_LOCKED",
          `lost the lock of the session store ${path}; nothing was written`,
          { cause: lost },
        );
      }
    },
  };
  try {
    return await fn(held);
  } finally {
    await release().catch((error: unknown) => {
      // Releasing a compromised lock fails; the lock is gone either way.
      if (!lost)
        logger.warn("could not release the session store lock", { path, error: describeError(error) });
    });
  }
}

/**
 * Takes over the lock in `lockDir` when its owner record names a process that is certainly dead. The directory
 * is renamed to a name of our own first and checked to be the dead owner's, so two processes taking over at
 * once cannot both remove it; a live lock moved by mistake (re-created between the read and the rename) is put
 * back. Returns true when the caller should try to lock again at once.
 */
async function takeOverFromDeadOwner(lockDir: string, path: string, logger: Logger): Promise<boolean> {
  const owner = await readLockOwner(lockDir);
  if (owner === undefined || !isOwnerDead(owner)) return false;
  const aside = `${lockDir}.dead-${randomBytes(4).toString("hex")}`;
  try {
    await rename(lockDir, aside);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return true;
    throw new ClawdisError("IO", `cannot take over the lock ${lockDir}: ${describeError(error)}`, {
      cause: error,
    });
  }
  const moved = await readLockOwner(aside);
  if (moved?.token !== owner.token) {
    // Someone removed the dead lock and locked anew in between: put theirs back. If the place is taken again,
    // its holder finds its record gone before its next write (assertHeld) and writes nothing.
    const restored = await rename(aside, lockDir).then(
      () => true,
      () => false,
    );
    if (!restored) await removeLockDir(aside);
    return true;
  }
  await removeLockDir(aside);
  logger.warn(`took over the session store lock left by process ${owner.pid}, which is no longer running`, {
    path,
    lock: lockDir,
  });
  return true;
}

/** Removes a lock directory and its owner record (never anything else in it). */
async function removeLockDir(dir: string): Promise<void> {
  await unlink(join(dir, OWNER_FILE)).catch(() => {});
  await rmdir(dir).catch((error: NodeJS.ErrnoException) => {
    if (error.code !== "ENOENT") throw error;
  });
}

type Callback = (error: NodeJS.ErrnoException | null) => void;

/**
 * Runs `op` at once and hands its outcome to `callback` on the next tick, as an asynchronous call of node's would.
 * For the lock's calls that make no inode (set and read the directory's times, write and close the record,
 * remove both): a few microseconds each done directly, where each trip through the threadpool cost some 70-100 µs
 * on the two-core machine (docs/benchmarks.md). The two that make one (the directory, the record's file) stay in
 * the threadpool: on ext4 without a journal a create can take the kernel a millisecond (docs/benchmarks.md), which
 * is not to be spent on the event loop.
 */
function now<T>(op: () => T, callback: (error: NodeJS.ErrnoException | null, value?: T) => void): void {
  let value: T;
  try {
    value = op();
  } catch (error) {
    process.nextTick(callback, error as NodeJS.ErrnoException);
    return;
  }
  process.nextTick(callback, null, value);
}

/**
 * The file system proper-lockfile uses (its `fs` option): node's, partly done synchronously (see `now`), except that
 * - making the lock directory also writes `owner.json` into it (0700 / 0600, exclusive create) before the lock
 *   counts as taken: a directory already holding a record (a lock put back by a takeover) reads as held;
 * - removing it removes the owner record first; once this holder has the lock, it removes only a directory
 *   that still holds this holder's record (never a lock another process took over).
 */
function ownerRecordingFs(lockDir: string, owner: LockOwner, state: { acquired: boolean }) {
  const recordPath = join(lockDir, OWNER_FILE);
  const record = `${JSON.stringify(owner)}\n`;
  const stillOurs = () => !state.acquired || readLockTokenSync(lockDir) === owner.token;
  return {
    stat: (path: string, callback: (error: NodeJS.ErrnoException | null, stat?: fs.Stats) => void) =>
      now(() => fs.statSync(path), callback),
    utimes: (path: string, atime: Date, mtime: Date, callback: Callback) =>
      now(() => fs.utimesSync(path, atime, mtime), callback),
    realpath: fs.realpath,
    mkdir(dir: string, callback: Callback) {
      fs.mkdir(dir, { mode: 0o700 }, (error) => {
        if (error || dir !== lockDir) return callback(error);
        fs.open(recordPath, "wx", 0o600, (openError, fd) => {
          // EEXIST: the directory is someone else's now; ENOENT: it was removed. Either way: not ours, held.
          if (openError?.code === "EEXIST" || openError?.code === "ENOENT") {
            return callback(Object.assign(new Error(`${lockDir} is held`), { code: "EEXIST" }));
          }
          now(
            () => {
              if (openError) throw openError;
              try {
                writeAll(fd, Buffer.from(record));
              } finally {
                fs.closeSync(fd);
              }
            },
            (writeError) => {
              if (!writeError) return callback(null);
              // Anything else (a full disk): the record may exist half-written; remove it and the directory, so no
              // lock without a readable owner is left behind to block others until it goes stale.
              ignoreFailure(() => fs.unlinkSync(recordPath));
              ignoreFailure(() => fs.rmdirSync(dir));
              callback(writeError);
            },
          );
        });
      });
    },
    rmdir(dir: string, callback: Callback) {
      now(() => {
        if (dir !== lockDir) return fs.rmdirSync(dir);
        if (!stillOurs()) return;
        ignoreFailure(() => fs.unlinkSync(recordPath));
        try {
          fs.rmdirSync(dir);
        } catch (error) {
          if ((error as NodeJS.ErrnoException).code !== "ENOENT") throw error;
        }
      }, callback);
    },
    /** Used by proper-lockfile's exit handler for locks still held when the process exits. */
    rmdirSync(dir: string) {
      if (dir !== lockDir) return fs.rmdirSync(dir);
      if (!stillOurs()) return;
      fs.rmSync(recordPath, { force: true });
      fs.rmdirSync(dir);
    },
  };
}

function ignoreFailure(op: () => void): void {
  try {
    op();
  } catch {
    // Best effort: what could not be removed is removed by whoever finds the lock stale.
  }
}

function delay(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
