import { closeSync, fstatSync, openSync, readSync } from "node:fs";
import type { NextFile } from "./store-diff.js";
import { applySegments, type Segment } from "./store-patch.js";
import {
  type FileVersion,
  isNotFound,
  MAX_STORE_BYTES,
  READ_ATTEMPTS,
  sameVersion,
  UNKNOWN_VERSION,
  versionOf,
} from "./store-read.js";

/** The chunk the file is compared in: one buffer, reused (never a buffer the size of the file). */
const CHUNK = 64 * 1024;

/**
 * The file now, read against the bytes held (`old`): its common prefix and suffix with them, and the bytes
 * between, which are all it holds of the file. A NextFile for diffStore; `patch` makes the file's bytes.
 */
export class SplicedFile implements NextFile {
  constructor(
    private readonly old: Buffer,
    readonly length: number,
    readonly prefix: number,
    /** The longest common suffix, at most min(old.length, length) (it may overlap the prefix). */
    private readonly commonSuffix: number,
    /** The bytes `[prefix, length - tail)` of the file. */
    private readonly middle: Buffer,
  ) {}

  /**
   * How much of the end comes from `old` beside the middle: the common suffix, up to the prefix in the file now
   * (in `old` the two may overlap, where they are the same bytes).
   */
  get tail(): number {
    return this.length - this.prefix - this.middle.length;
  }

  suffix(limit: number): number {
    return Math.min(this.commonSuffix, limit);
  }

  bytes(from: number, to: number): Buffer {
    const parts: Buffer[] = [];
    const midEnd = this.prefix + this.middle.length;
    if (from < this.prefix) parts.push(this.old.subarray(from, Math.min(to, this.prefix)));
    if (to > this.prefix && from < midEnd)
      parts.push(
        this.middle.subarray(Math.max(from, this.prefix) - this.prefix, Math.min(to, midEnd) - this.prefix),
      );
    if (to > midEnd) {
      const shift = this.old.length - this.length;
      parts.push(this.old.subarray(Math.max(from, midEnd) + shift, to + shift));
    }
    return parts.length === 1 ? parts[0]! : Buffer.concat(parts);
  }

  /** The pieces of the file: the old prefix, the middle, the old suffix. */
  segments(): Segment[] {
    return [
      { from: 0, to: this.prefix },
      { bytes: this.middle },
      { from: this.old.length - this.tail, to: this.old.length },
    ];
  }

  /**
   * The file's bytes in `buffer` (which holds `old` in its first bytes), patched in place when they fit (see
   * applySegments); the buffer that holds them is returned. `old` is not the old file any more after this.
   */
  patch(buffer: Buffer): Buffer {
    return applySegments(buffer, this.segments(), this.length).subarray(0, this.length);
  }
}

export type SplicedRead =
  | { exists: false }
  | { exists: true; version: FileVersion; tooLarge: true; readAt: number }
  | { exists: true; version: FileVersion; file: SplicedFile; readAt: number; tooLarge?: undefined };

/**
 * Reads the store file against `old`, the bytes of the version held: compares them chunk by chunk through one
 * small buffer from the start and from the end, and keeps only the bytes between. An outside edit of one entry of
 * a 4.6 MB store reads it all but holds ~64 KiB: on this kind of machine, filling a fresh buffer the size of the
 * file (its pages first touched) cost ten times the read itself. Synchronous (a read of the page cache, ~1 ms for
 * 4.6 MB): nothing can change `old` while it compares. The version is taken before and after, as readStoreBytes
 * takes it (the same retries, then UNKNOWN_VERSION).
 */
export function readStoreSpliced(
  path: string,
  old: Buffer,
  maxBytes = MAX_STORE_BYTES,
): SplicedRead | undefined {
  const readAt = Date.now();
  let fd: number;
  try {
    fd = openSync(path, "r");
  } catch (error) {
    if (isNotFound(error)) return { exists: false };
    throw error;
  }
  try {
    const chunk = Buffer.allocUnsafe(CHUNK);
    for (let attempt = 1; ; attempt++) {
      const version = versionOf(fstatSync(fd, { bigint: true }));
      if (version.size > BigInt(maxBytes)) return { exists: true, version, tooLarge: true, readAt };
      const file = splice(fd, old, Number(version.size), chunk);
      const after = versionOf(fstatSync(fd, { bigint: true }));
      if (file && sameVersion(after, version)) return { exists: true, version, file, readAt };
      if (attempt >= READ_ATTEMPTS)
        return file ? { exists: true, version: UNKNOWN_VERSION, file, readAt } : undefined;
    }
  } finally {
    closeSync(fd);
  }
}

/**
 * Whether the file at `path` holds exactly `bytes`, compared through one small buffer (as readStoreSpliced, and
 * for the same reason). False when it is missing or differs anywhere, its length included.
 */
export function fileHolds(path: string, bytes: Buffer): boolean {
  let fd: number;
  try {
    fd = openSync(path, "r");
  } catch (error) {
    if (isNotFound(error)) return false;
    throw error;
  }
  try {
    if (fstatSync(fd).size !== bytes.length) return false;
    return firstDifferenceFrom(fd, bytes, bytes.length, Buffer.allocUnsafe(CHUNK)) === bytes.length;
  } finally {
    closeSync(fd);
  }
}

/** The file of `size` bytes as a SplicedFile, or undefined when it was shorter than that (changed meanwhile). */
function splice(fd: number, old: Buffer, size: number, chunk: Buffer): SplicedFile | undefined {
  const limit = Math.min(old.length, size);
  const prefix = firstDifferenceFrom(fd, old, limit, chunk);
  if (prefix < 0) return undefined;
  // The same bytes: the suffix is all of them, nothing to read from the end.
  if (prefix === size && size === old.length) return new SplicedFile(old, size, size, size, Buffer.alloc(0));
  let suffix = 0;
  while (suffix < limit) {
    const n = Math.min(CHUNK, limit - suffix);
    if (readSync(fd, chunk, 0, n, size - suffix - n) !== n) return undefined;
    const same = lastDifference(chunk, n, old, old.length - suffix - n);
    suffix += same;
    if (same < n) break;
  }
  const tail = Math.min(suffix, size - prefix);
  const middle = Buffer.allocUnsafe(size - prefix - tail);
  for (let at = 0; at < middle.length; ) {
    const n = readSync(fd, middle, at, middle.length - at, prefix + at);
    if (n === 0) return undefined;
    at += n;
  }
  return new SplicedFile(old, size, prefix, suffix, middle);
}

/** The length of the common prefix of the file and `old`, at most `limit`; -1 when the file ended before. */
function firstDifferenceFrom(fd: number, old: Buffer, limit: number, chunk: Buffer): number {
  let prefix = 0;
  while (prefix < limit) {
    const n = readSync(fd, chunk, 0, Math.min(CHUNK, limit - prefix), prefix);
    if (n === 0) return -1;
    const same = firstDifference(chunk, old, prefix, n);
    prefix += same;
    if (same < n) break;
  }
  return prefix;
}

/** How many of the first `n` bytes of `chunk` equal `old` from `at` on. */
function firstDifference(chunk: Buffer, old: Buffer, at: number, n: number): number {
  if (chunk.compare(old, at, at + n, 0, n) === 0) return n;
  let k = 0;
  while (k < n && chunk[k] === old[at + k]) k++;
  return k;
}

/** How many of the last bytes of `chunk[0, n)` equal the bytes of `old` ending at `at + n`, from the end. */
function lastDifference(chunk: Buffer, n: number, old: Buffer, at: number): number {
  if (chunk.compare(old, at, at + n, 0, n) === 0) return n;
  let k = 0;
  while (k < n && chunk[n - 1 - k] === old[at + n - 1 - k]) k++;
  return k;
}
