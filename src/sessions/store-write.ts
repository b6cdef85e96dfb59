import { randomBytes } from "node:crypto";
import { open, rename, unlink } from "node:fs/promises";
import { basename, dirname, join } from "node:path";

/**
 * Replaces `path` with `text` atomically: a temp file in the same directory is written and fsync'd, then renamed
 * over `path`, then the directory is fsync'd so that the rename itself survives a crash. A reader sees the old
 * file or the new one, never a mix. `beforeRename` may throw to abandon the write (the temp file is removed).
 */
export async function writeFileAtomic(path: string, text: string, beforeRename?: () => void): Promise<void> {
  const dir = dirname(path);
  const temp = join(dir, `.${basename(path)}.tmp-${process.pid}-${randomBytes(4).toString("hex")}`);
  const handle = await open(temp, "wx", 0o600);
  let renamed = false;
  try {
    await handle.writeFile(text, "utf8");
    await handle.sync();
    await handle.close();
    beforeRename?.();
    await rename(temp, path);
    renamed = true;
  } finally {
    if (!renamed) {
      await handle.close().catch(() => {});
      await unlink(temp).catch(() => {});
    }
  }
  await fsyncDir(dir);
}

/** Best effort: some platforms (Windows) cannot open or fsync a directory; the rename is atomic anyway. */
async function fsyncDir(dir: string): Promise<void> {
  let handle: Awaited<ReturnType<typeof open>> | undefined;
  try {
    handle = await open(dir, "r");
    await handle.sync();
  } catch {
    // Not supported here: nothing more to do.
  } finally {
    await handle?.close().catch(() => {});
  }
}
