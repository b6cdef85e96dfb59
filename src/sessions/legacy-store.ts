import { constants } from "node:fs";
import { copyFile, mkdir, rename, stat, unlink } from "node:fs/promises";
import { dirname, resolve } from "node:path";
import type { Logger } from "../core/logger.js";
import { type Env, legacyStorePath } from "../core/paths.js";

async function isPresent(path: string): Promise<boolean> {
  try {
    await stat(path);
    return true;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return false;
    throw error;
  }
}

/**
 * Moves the store of clawdis before 0.1 (`<state>/sessions.json`) to `storePath`, once, at start-up:
 * - only the legacy file exists: it is moved (directories created) and one info line says from where to where;
 * - both exist: neither is touched and one warning says so (the user decides which one to keep);
 * - otherwise (or when both paths are the same file): nothing happens.
 */
export async function migrateLegacyStore(
  env: Env,
  logger: Logger,
  storePath: string,
): Promise<"moved" | "none" | "kept-both"> {
  const legacy = legacyStorePath(env);
  if (resolve(legacy) === resolve(storePath)) return "none";
  if (!(await isPresent(legacy))) return "none";
  if (await isPresent(storePath)) {
    logger.warn(
      `found an old session store at ${legacy} and the current one at ${storePath}; using ${storePath} and leaving both untouched. Merge by hand if you need entries from the old one, then delete it to silence this warning`,
    );
    return "kept-both";
  }
  await mkdir(dirname(storePath), { recursive: true, mode: 0o700 });
  try {
    await rename(legacy, storePath);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== "EXDEV") throw error;
    // Different file systems: copy, then remove the original only once the copy is complete.
    await copyFile(legacy, storePath, constants.COPYFILE_EXCL);
    await unlink(legacy);
  }
  logger.info(`moved the session store from ${legacy} to ${storePath}`);
  return "moved";
}
