import { mkdir } from "node:fs/promises";
import { dirname } from "node:path";
import { writeFileAtomic } from "../sessions/store-write.js";

/**
 * Writes a file that only this user may read (0600, in a folder created 0700), atomically: a temp file in the
 * same folder is written and fsync'd, renamed over `path`, and the folder fsync'd. A crash or two overlapping
 * writes never leave a torn or empty file: a reader sees the old content or one whole new one. For credentials,
 * update offsets, caches: everything a plugin keeps in `context.pluginStateDir` or `<stateDir>/credentials/<id>/`.
 */
export async function writePrivateFile(path: string, data: string | Uint8Array): Promise<void> {
  await mkdir(dirname(path), { recursive: true, mode: 0o700 });
  await writeFileAtomic(path, data);
}
