import type { FileVersion } from "./store-read.js";

/**
 * File system timestamps usually come from a coarse clock (a tick of 1–10 ms): two changes within one tick may
 * leave (ino, size, mtime, ctime) alike. This is a tick with margin. A file system that keeps only whole seconds
 * (seen when the store's own stamp does not stick) gets COARSE_TICK_MS.
 */
export const SAME_TICK_MS = 100;
export const COARSE_TICK_MS = 2_100;

const ms = (ns: bigint) => Number(ns / 1_000_000n);

/**
 * Whether a version read (by someone else; the store's own writes are stamped, see store-write.ts) can be taken
 * as unchanged while its (ino, size, mtime, ctime) stay as read: always when each change gets a ctime of its own
 * (`fineTimes`, store-fine-times.ts), else only when the read began a tick after its ctime (a later change then
 * falls in a later tick, and shows). Pure.
 */
export function trustedAfterRead(
  version: FileVersion,
  readAt: number,
  fineTimes: boolean,
  tickMs: number,
): boolean {
  return fineTimes || ms(version.ctimeNs) < readAt - tickMs;
}

/** Whether `version` changed within a tick before `now` (a change in that same tick might not show yet). Pure. */
export function changedWithinTick(version: FileVersion, now: number, tickMs: number): boolean {
  return ms(version.ctimeNs) > now - tickMs;
}
