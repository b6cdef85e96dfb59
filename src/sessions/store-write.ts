import { randomBytes } from "node:crypto";
import { renameSync } from "node:fs";
import { mkdir, open, unlink } from "node:fs/promises";
import { basename, dirname, join } from "node:path";
import type { FileVersion } from "./store-read.js";

/**
 * Replaces `path` with `text` atomically: a temp file (0600) in the same directory is written and fsync'd, then
 * renamed over `path`, then the directory is fsync'd so that the rename itself survives a power cut. A reader
 * sees the old file or the new one, never a mix and never no file, and a crash never leaves a torn file.
 * `beforeRename` may throw (or reject) to abandon the write: the temp file is removed and `path` is untouched.
 * `lastCheck` runs synchronously right before a synchronous rename (nothing else runs between the two), so what it
 * checks is as fresh as it can be; it may throw to abandon the write too.
 * Returns the version (inode, mtime, size) of the file now at `path`, so that the writer need not stat it again.
 * When the directory fsync fails after the rename, the error is thrown although the new file is in place.
 */
export async function writeFileAtomic(
  path: string,
  text: string | Uint8Array,
  beforeRename?: () => void | Promise<void>,
  lastCheck?: () => void,
): Promise<FileVersion> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await writeOnce(path, text, beforeRename, lastCheck);
    } catch (error) {
      // The directory was deleted by hand meanwhile (deleting it is a reset): make it again and write again.
      if ((error as NodeJS.ErrnoException).code !== "ENOENT" || attempt >= DIRECTORY_GONE_ATTEMPTS)
        throw error;
      await mkdir(dirname(path), { recursive: true, mode: 0o700 });
    }
  }
}

/** How often a write starts over because its directory went away while it ran. */
const DIRECTORY_GONE_ATTEMPTS = 3;

async function writeOnce(
  path: string,
  text: string | Uint8Array,
  beforeRename?: () => void | Promise<void>,
  lastCheck?: () => void,
): Promise<FileVersion> {
  const temp = join(dirname(path), `.${basename(path)}.tmp-${process.pid}-${randomBytes(4).toString("hex")}`);
  const handle = await open(temp, "wx", 0o600);
  let renamed = false;
  let version: FileVersion;
  try {
    await handle.writeFile(text);
    await handle.sync();
    // A rename keeps the inode and the mtime, so this is the version readers will see at `path`.
    const stat = await handle.stat({ bigint: true });
    version = { ino: stat.ino, mtimeNs: stat.mtimeNs, size: stat.size };
    await handle.close();
    await beforeRename?.();
    lastCheck?.();
    renameSync(temp, path);
    renamed = true;
  } finally {
    if (!renamed) {
      await handle.close().catch(() => {});
      await unlink(temp).catch(() => {});
    }
  }
  await syncDirectory(dirname(path));
  return version;
}

/** Codes of file systems or platforms that cannot fsync a directory (nothing to do there). */
const NO_DIRECTORY_SYNC = new Set(["EINVAL", "ENOTSUP", "EISDIR", "EPERM", "EBADF"]);

/** fsync of a directory, so that a rename into it is on disk. */
export async function syncDirectory(dir: string): Promise<void> {
  let handle: Awaited<ReturnType<typeof open>>;
  try {
    handle = await open(dir, "r");
  } catch (error) {
    if (NO_DIRECTORY_SYNC.has((error as NodeJS.ErrnoException).code ?? "")) return;
    throw error;
  }
  try {
    await handle.sync();
  } catch (error) {
    if (!NO_DIRECTORY_SYNC.has((error as NodeJS.ErrnoException).code ?? "")) throw error;
  } finally {
    await handle.close();
  }
}
