import { mkdirSync } from "node:fs";
import { mkdir } from "node:fs/promises";

/**
 * Makes `dir` (and its parents, 0700) again after something deleted it, as `mkdir -p` does. Deleting the sessions
 * folder is a reset, and a folder deleted over and over while turns run can vanish while it is made: a recursive
 * mkdir that found it (EEXIST) and then lost it fails with ENOENT. That is not an error here: the caller tries its
 * operation again, which then finds the folder missing and comes back here (each caller bounds its attempts).
 * Any other failure (a file where a folder should be, no permission) is thrown.
 */
export async function remakeFolder(dir: string): Promise<void> {
  try {
    await mkdir(dir, { recursive: true, mode: 0o700 });
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== "ENOENT") throw error;
  }
}

/** `remakeFolder`, synchronously (for the transcript's synchronous open). */
export function remakeFolderSync(dir: string): void {
  try {
    mkdirSync(dir, { recursive: true, mode: 0o700 });
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== "ENOENT") throw error;
  }
}
