import { execFile } from "node:child_process";
import { open } from "node:fs/promises";
import { promisify } from "node:util";

const run = promisify(execFile);

/**
 * A small tmpfs for the full-disk scenario: `mount -t tmpfs -o size=<bytes> tmpfs <dir>` (root only). Rejects
 * with what to do when the machine does not allow it, so the scenario fails with a reason instead of passing
 * without having filled a disk.
 */
export async function mountTmpfs(dir: string, bytes: number): Promise<void> {
  try {
    await run("mount", ["-t", "tmpfs", "-o", `size=${bytes},mode=0700`, "tmpfs", dir]);
  } catch (error) {
    throw new Error(
      `the full-disk scenario mounts a small tmpfs and needs root (or CAP_SYS_ADMIN) for it: mount said ${String((error as { stderr?: string }).stderr ?? error).trim()}`,
    );
  }
}

export async function unmount(dir: string): Promise<void> {
  await run("umount", [dir]).catch(() => run("umount", ["-l", dir]));
}

/** Writes `path` until the file system is full (ENOSPC); returns the bytes written. */
export async function fillDisk(path: string): Promise<number> {
  const handle = await open(path, "a");
  const chunk = Buffer.alloc(64 * 1024, 0x61);
  let written = 0;
  try {
    for (let size = chunk.length; size >= 1; ) {
      try {
        const { bytesWritten } = await handle.write(chunk.subarray(0, size));
        written += bytesWritten;
        if (bytesWritten < size) size = Math.floor(size / 2);
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== "ENOSPC") throw error;
        size = Math.floor(size / 2);
      }
    }
  } finally {
    await handle.close();
  }
  return written;
}
