import { randomBytes } from "node:crypto";
import { open, rename, unlink } from "node:fs/promises";
import { basename, dirname, join } from "node:path";
import type { FileVersion } from "./store-read.js";

/**
 * Replaces `path` with `text` atomically: a temp file in the same directory is written and fsync'd, then renamed
 * over `path`. A reader sees the old file or the new one, never a mix, and a crash never leaves a torn file.
 * `beforeRename` may throw to abandon the write (the temp file is removed). Returns the version (inode, mtime,
 * size) of the file now at `path`, so that the writer need not stat it again.
 *
 * The directory is not fsync'd after the rename: on the disks measured (bench/store-bench.ts) a directory fsync
 * costs as much as the file fsync, and all it adds is that the rename itself survives a power cut at once
 * instead of at the file system's next commit. What a crash can cost is the last update, never the file.
 */
export async function writeFileAtomic(
  path: string,
  text: string | Uint8Array,
  beforeRename?: () => void,
): Promise<FileVersion> {
  const temp = join(dirname(path), `.${basename(path)}.tmp-${process.pid}-${randomBytes(4).toString("hex")}`);
  const handle = await open(temp, "wx", 0o600);
  let renamed = false;
  try {
    await handle.writeFile(text);
    await handle.sync();
    // A rename keeps the inode and the mtime, so this is the version readers will see at `path`.
    const stat = await handle.stat({ bigint: true });
    await handle.close();
    beforeRename?.();
    await rename(temp, path);
    renamed = true;
    return { ino: stat.ino, mtimeNs: stat.mtimeNs, size: stat.size };
  } finally {
    if (!renamed) {
      await handle.close().catch(() => {});
      await unlink(temp).catch(() => {});
    }
  }
}
