import { mkdir } from "node:fs/promises";
import { dirname } from "node:path";
import { ClawdisError, describeError } from "../core/errors.js";
import type { Logger } from "../core/logger.js";

/** How long a lock left behind by a killed process blocks others before it is taken over. */
export const LOCK_STALE_MS = 10_000;

/** A held lock: `assertHeld()` throws once the lock was lost, so a write can be abandoned before its rename. */
export interface HeldLock {
  assertHeld(): void;
}

/**
 * Runs `fn` while holding the cross-process lock of `path` (`<path>.lock`, a directory, via proper-lockfile).
 * The lock is released in `finally`, also when `fn` throws. proper-lockfile is imported on first use so that
 * read-only commands never load it.
 */
export async function withFileLock<T>(
  path: string,
  logger: Logger,
  fn: (lock: HeldLock) => Promise<T>,
): Promise<T> {
  await mkdir(dirname(path), { recursive: true });
  const { lock } = await import("proper-lockfile");
  let lost: Error | undefined;
  let release: () => Promise<void>;
  try {
    release = await lock(path, {
      realpath: false,
      retries: { retries: 50, minTimeout: 5, maxTimeout: 100, factor: 1.5, randomize: true },
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
