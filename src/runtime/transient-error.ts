import { isClawdisError } from "../core/errors.js";

/** errno codes of conditions that pass by themselves: a full disk, a busy or exhausted resource, a flaky device. */
const TRANSIENT_ERRNO = new Set(["ENOSPC", "EDQUOT", "EIO", "EMFILE", "ENFILE", "EAGAIN", "EBUSY", "ENOMEM"]);

/**
 * Whether handling a message failed for a reason that passes (the disk fills up, another process holds the
 * store's lock): then the message is kept and tried again, never ended. Anything else is a bug or a bad input,
 * and ends the message with a notice. Looks through the `cause` chain.
 */
export function isTransientError(error: unknown): boolean {
  for (let e: unknown = error, depth = 0; e !== undefined && e !== null && depth < 8; depth++) {
    if (isClawdisError(e, "STORE_LOCKED") || isClawdisError(e, "STATE_BUSY")) return true;
    const code = (e as NodeJS.ErrnoException).code;
    if (typeof code === "string" && TRANSIENT_ERRNO.has(code)) return true;
    e = (e as { cause?: unknown }).cause;
  }
  return false;
}

/** The wait before try number `attempt` (1-based) of a message that failed transiently: 1 s doubling, at most 60 s. */
export function retryDelayMs(attempt: number): number {
  return Math.min(60_000, 1000 * 2 ** Math.max(0, attempt - 1));
}
