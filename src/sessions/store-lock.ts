import { mkdir } from "node:fs/promises";
import { dirname } from "node:path";
import { ClawdisError, describeError } from "../core/errors.js";
import type { Logger } from "../core/logger.js";

type LockOptions = NonNullable<Parameters<typeof import("proper-lockfile").lock>[1]>;
type OperationOptions = Exclude<LockOptions["retries"], number | undefined>;

/** Up to 50 attempts over about 5 s: long enough for a queue of writers, short enough to report a stuck lock. */
const RETRIES: OperationOptions = {
  retries: 50,
  minTimeout: 5,
  maxTimeout: 100,
  factor: 1.5,
  randomize: true,
};

/** How long a lock left behind by a killed process blocks others before it is taken over. */
export const LOCK_STALE_MS = 10_000;

/** A held lock: `assertHeld()` throws once the lock was lost, so a write can be abandoned before its rename. */
export interface HeldLock {
  assertHeld(): void;
}

/**
 * Runs `fn` while holding the cross-process lock of `path` (`<path>.lock`, a directory, via proper-lockfile).
 * The directory of `path` is created when it is missing.
 * The lock is released in `finally`, also when `fn` throws. proper-lockfile is imported on first use so that
 * read-only commands never load it.
 */
export async function withFileLock<T>(
  path: string,
  logger: Logger,
  fn: (lock: HeldLock) => Promise<T>,
): Promise<T> {
  const { lock } = await import("proper-lockfile");
  let lost: Error | undefined;
  const options = (retries: OperationOptions | 0): LockOptions => ({
    realpath: false,
    retries,
    stale: LOCK_STALE_MS,
    onCompromised: (error) => {
      // The default handler throws from a timer and kills the process; record it and refuse to write instead.
      lost = error;
      logger.error("lost the session store lock; the write in progress is abandoned", {
        path,
        error: describeError(error),
      });
    },
  });
  let release: () => Promise<void>;
  try {
    // Fast path: one attempt. proper-lockfile retries every error, so a missing directory (ENOENT) is created
    // here rather than waited on, and only a lock held by someone else (ELOCKED) goes to the retrying attempt.
    release = await lock(path, options(0)).catch(async (error: NodeJS.ErrnoException) => {
      if (error.code === "ENOENT") await mkdir(dirname(path), { recursive: true });
      else if (error.code !== "ELOCKED") throw error;
      return lock(path, options(RETRIES));
    });
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ELOCKED") {
      throw new ClawdisError(
        "STORE_LOCKED",
        `the session store ${path} stayed locked by another process (${path}.lock). If no clawdis process is running, the lock is taken over after ${LOCK_STALE_MS / 1000} s`,
        { cause: error },
      );
    }
    throw new ClawdisError("IO", `cannot lock the session store ${path}: ${describeError(error)}`, {
      cause: error,
    });
  }
  const held: HeldLock = {
    assertHeld: () => {
      if (lost) {
        throw new ClawdisError(
          "STORE_LOCKED",
          `lost the lock of the session store ${path}; nothing was written`,
          {
            cause: lost,
          },
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
