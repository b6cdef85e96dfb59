import { randomBytes } from "node:crypto";
import { closeSync, fstatSync, fsync, futimesSync, open, openSync, renameSync, writev } from "node:fs";
import { unlink } from "node:fs/promises";
import { basename, dirname, join } from "node:path";
import { promisify } from "node:util";
import { remakeFolder } from "./remake-folder.js";
import { type FileVersion, versionOf } from "./store-read.js";

/**
 * Replaces `path` with `text` atomically: a temp file (0600) in the same directory is written and fsync'd, then
 * renamed over `path`, then the directory is fsync'd so that the rename itself survives a power cut. A reader
 * sees the old file or the new one, never a mix and never no file, and a crash never leaves a torn file.
 * `beforeRename` may throw (or reject) to abandon the write: the temp file is removed and `path` is untouched.
 * `lastCheck` runs synchronously right before a synchronous rename (nothing else runs between the two), so what it
 * checks is as fresh as it can be; it may throw to abandon the write too.
 * When the directory fsync fails after the rename, the error is thrown although the new file is in place.
 */
export async function writeFileAtomic(
  path: string,
  text: string | Uint8Array,
  beforeRename?: () => void | Promise<void>,
  lastCheck?: () => void,
): Promise<void> {
  await writePiecesAtomic(path, [typeof text === "string" ? Buffer.from(text) : text], {
    beforeRename,
    lastCheck,
  });
}

export interface PiecesWrite {
  /**
   * Set the temp file's modification time to a stamp in the past before the fsync (see stampTime), and report
   * in `renamed` whether the file system kept it exactly.
   */
  stamp?: boolean;
  beforeRename?: () => void | Promise<void>;
  lastCheck?: () => void;
  /**
   * Runs synchronously right after the rename, before the directory fsync: the version of the file now at
   * `path` (read from the renamed file's own descriptor; undefined if that failed) and whether its mtime is
   * our stamp. Nothing else of this process runs between the rename and this call.
   */
  renamed?: (version: FileVersion | undefined, stamped: boolean) => void;
}

/**
 * `writeFileAtomic` of the concatenation of `pieces`, written with one gathering write (no whole-file buffer is
 * built). The pieces must not change until the promise settles.
 */
export async function writePiecesAtomic(
  path: string,
  pieces: readonly Uint8Array[],
  options: PiecesWrite = {},
): Promise<void> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await writeOnce(path, pieces, options);
    } catch (error) {
      // The directory was deleted by hand meanwhile (deleting it is a reset): make it again and write again.
      if ((error as NodeJS.ErrnoException).code !== "ENOENT" || attempt >= DIRECTORY_GONE_ATTEMPTS)
        throw error;
      await remakeFolder(dirname(path));
    }
  }
}

/** How often a write starts over because its directory went away while it ran. */
const DIRECTORY_GONE_ATTEMPTS = 4;

/**
 * The modification time a stamped write gives its file: one second before now, at 777 µs past the millisecond.
 * Any later write to the file, by anyone, sets its mtime to the current time, which is never this value, so
 * (ino, size, mtime, ctime) equal to what the writer saw after its rename means nobody wrote since. (Node sets
 * times in microseconds, hence a microsecond stamp; a file system that keeps coarser times rounds it, which the
 * writer sees, and then does not rely on the stamp.)
 */
export function stampTime(now: number): bigint {
  return BigInt(Math.floor(now) - 1000) * 1_000_000n + 777_000n;
}

/** How far a stamp read back may be from the one set (float seconds through utimes) and still count as kept. */
const STAMP_TOLERANCE_NS = 10_000n;

/**
 * One attempt. The calls that only touch metadata of an existing file (set the temp file's time, close it, open
 * and close the directory) are synchronous: microseconds each, where a trip through the threadpool cost some
 * 70-100 µs on the two-core machine (docs/benchmarks.md). Creating the temp file (on ext4 without a journal the
 * kernel may take a millisecond to find an inode), the writes and both fsyncs wait off the event loop.
 */
async function writeOnce(path: string, pieces: readonly Uint8Array[], options: PiecesWrite): Promise<void> {
  const temp = join(dirname(path), `.${basename(path)}.tmp-${process.pid}-${randomBytes(4).toString("hex")}`);
  const fd = await openFile(temp, "wx", 0o600);
  let renamed = false;
  try {
    await writeAll(fd, pieces);
    const stamp = options.stamp ? stampTime(Date.now()) : undefined;
    if (stamp !== undefined) {
      const seconds = Number(stamp) / 1e9;
      futimesSync(fd, seconds, seconds);
    }
    await fsyncFile(fd);
    await options.beforeRename?.();
    options.lastCheck?.();
    renameSync(temp, path);
    renamed = true;
    // A rename changes the file's ctime: the version readers see is the one after it.
    let version: FileVersion | undefined;
    try {
      version = versionOf(fstatSync(fd, { bigint: true }));
    } catch {
      version = undefined;
    }
    const stamped =
      stamp !== undefined &&
      version !== undefined &&
      version.mtimeNs - stamp < STAMP_TOLERANCE_NS &&
      stamp - version.mtimeNs < STAMP_TOLERANCE_NS;
    options.renamed?.(version, stamped);
  } finally {
    try {
      closeSync(fd);
    } catch {
      // Closing a local file flushes nothing: what was to be written was written (and fsync'd) or failed above.
    }
    if (!renamed) await unlink(temp).catch(() => {});
  }
  await syncDirectory(dirname(path));
}

const openFile = promisify(open);
const writevAsync = promisify(writev);
const fsyncFile = promisify(fsync);

/**
 * The most bytes one write call hands the kernel. A bigger call lets this machine's kernel (Linux 6.18, ext4 with
 * large folios) take the file's page cache in 2 MiB folios, and allocating one now and then stalls on memory
 * compaction: one write of a 46 MB store took 130-190 ms instead of 10 in 4-8 % of the calls, writes of 2 MiB as
 * often, writes of 1 MiB never in 50 (docs/benchmarks.md). Node's own `writeFile` writes 512 KiB at a time.
 */
export const WRITE_CALL_BYTES = 1024 * 1024;

/** One write call: views of the pieces (no copy) for `position` onwards, at most WRITE_CALL_BYTES in all. */
export interface WriteCall {
  position: number;
  buffers: Uint8Array[];
}

/** `pieces` (written one after another from offset 0) as write calls of at most `limit` bytes each. Pure. */
export function writeCalls(pieces: readonly Uint8Array[], limit = WRITE_CALL_BYTES): WriteCall[] {
  if (!Number.isInteger(limit) || limit < 1)
    throw new RangeError(`a write call's limit must be at least 1 byte`);
  const calls: WriteCall[] = [];
  let current: WriteCall = { position: 0, buffers: [] };
  let filled = 0;
  let position = 0;
  for (const piece of pieces) {
    let at = 0;
    while (at < piece.length) {
      if (filled === limit) {
        calls.push(current);
        current = { position, buffers: [] };
        filled = 0;
      }
      const take = Math.min(piece.length - at, limit - filled);
      current.buffers.push(at === 0 && take === piece.length ? piece : piece.subarray(at, at + take));
      at += take;
      filled += take;
      position += take;
    }
  }
  if (current.buffers.length > 0) calls.push(current);
  return calls;
}

/** How many write calls of one file run at once: a few threadpool trips overlap, the rest of the pool stays free. */
const WRITES_IN_FLIGHT = 4;

/**
 * Writes every byte of `pieces` from offset 0 in write calls (writeCalls), up to WRITES_IN_FLIGHT at once, each
 * at its own position (a 4.6 MB store: five calls in about two trips through the threadpool). Settles only once
 * no call runs any more (the file is never closed or removed under a write); after a failure no new call starts,
 * and it rejects with the first failure.
 */
async function writeAll(fd: number, pieces: readonly Uint8Array[]): Promise<void> {
  const calls = writeCalls(pieces);
  let next = 0;
  let failure: { error: unknown } | undefined;
  const worker = async () => {
    while (next < calls.length && failure === undefined) {
      const call = calls[next++]!;
      try {
        await writeAt(fd, call.buffers, call.position);
      } catch (error) {
        failure ??= { error };
      }
    }
  };
  await Promise.all(Array.from({ length: Math.min(WRITES_IN_FLIGHT, calls.length) }, worker));
  if (failure) throw failure.error;
}

/** Writes every byte of `buffers` at `position`, again after a short write. */
async function writeAt(fd: number, buffers: readonly Uint8Array[], position: number): Promise<void> {
  let rest = buffers.filter((b) => b.length > 0);
  while (rest.length > 0) {
    const { bytesWritten } = await writevAsync(fd, rest, position);
    if (bytesWritten <= 0) throw Object.assign(new Error("write wrote nothing"), { code: "EIO" });
    position += bytesWritten;
    let skip = bytesWritten;
    while (rest.length > 0 && skip >= rest[0]!.length) {
      skip -= rest[0]!.length;
      rest = rest.slice(1);
    }
    if (skip > 0) rest = [rest[0]!.subarray(skip), ...rest.slice(1)];
  }
}

/** Codes of file systems or platforms that cannot fsync a directory (nothing to do there). */
const NO_DIRECTORY_SYNC = new Set(["EINVAL", "ENOTSUP", "EISDIR", "EPERM", "EBADF"]);

/** fsync of a directory, so that a rename into it is on disk (opened and closed synchronously, see writeOnce). */
export async function syncDirectory(dir: string): Promise<void> {
  let fd: number;
  try {
    fd = openSync(dir, "r");
  } catch (error) {
    if (NO_DIRECTORY_SYNC.has((error as NodeJS.ErrnoException).code ?? "")) return;
    throw error;
  }
  try {
    await fsyncFile(fd);
  } catch (error) {
    if (!NO_DIRECTORY_SYNC.has((error as NodeJS.ErrnoException).code ?? "")) throw error;
  } finally {
    closeSync(fd);
  }
}
