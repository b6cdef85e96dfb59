import { chmod, constants, copyFile, link, unlink } from "node:fs/promises";
import type { RawStore } from "./store-image.js";
import { nullPrototypeCopy } from "./store-parse.js";
import { type FileVersion, sameData, statStoreFile } from "./store-read.js";
import { rebuildFromTranscripts } from "./store-rebuild.js";

/** Codes of file systems that have no hard links: the bad file is copied instead. */
const NO_HARD_LINKS = new Set(["EPERM", "ENOTSUP", "EOPNOTSUPP", "EXDEV", "EMLINK", "ENOSYS"]);

/**
 * Keeps the store file at `path`, judged bad at `version`, as `<path>.bad-<timestamp>` (0600), while `path`
 * itself stays where it is: the caller then renames a good copy over `path`, so no reader ever finds the store
 * missing. The copy is a hard link to the same inode (nothing is read or copied, even for 2 GB), or a byte copy
 * where hard links are not supported. An earlier `.bad-*` file is never overwritten.
 *
 * Returns the new name and the version of the file at `path` now (a hard link changes its ctime, nothing else),
 * or undefined when the file at `path` is no longer `version` (replaced or edited since it was judged): then
 * nothing is kept and the caller reads the file again.
 */
export async function keepBadCopy(
  path: string,
  version: FileVersion,
  now: number,
): Promise<{ target: string; version: FileVersion } | undefined> {
  const stamp = new Date(now).toISOString().replace(/[:.]/g, "-");
  for (let n = 0; ; n++) {
    const target = n === 0 ? `${path}.bad-${stamp}` : `${path}.bad-${stamp}-${n}`;
    const made = await linkOrCopy(path, target);
    if (made === "taken") continue;
    if (made === "missing") return undefined;
    // The link names the inode that was at `path` when it was made; a copy is checked against `path` after it.
    const kept = await statStoreFile(made === "linked" ? target : path);
    if (!sameData(kept, version)) {
      await unlink(target).catch(() => {});
      return undefined;
    }
    await chmod(target, 0o600);
    // chmod of the link changed the inode's ctime again: this is the version the caller may replace.
    const current = await statStoreFile(path);
    if (!sameData(current, version)) {
      await unlink(target).catch(() => {});
      return undefined;
    }
    return { target, version: current as FileVersion };
  }
}

async function linkOrCopy(path: string, target: string): Promise<"linked" | "copied" | "taken" | "missing"> {
  try {
    await link(path, target);
    return "linked";
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code ?? "";
    if (code === "EEXIST") return "taken";
    if (code === "ENOENT") return "missing";
    if (!NO_HARD_LINKS.has(code)) throw error;
  }
  try {
    await copyFile(path, target, constants.COPYFILE_EXCL);
    return "copied";
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === "EEXIST") return "taken";
    if (code === "ENOENT") return "missing";
    throw error;
  }
}

/**
 * What replaces a store that was set aside: a copy of the last good content (`good`), or, with none known, the
 * map rebuilt from the transcript headers in `dir`; and how the log line says which.
 */
export async function replacementFor(
  good: RawStore | undefined,
  dir: string,
): Promise<{ raw: RawStore; carried: string }> {
  if (good) {
    const raw = nullPrototypeCopy(good);
    return { raw, carried: `carried on with the last good copy (${Object.keys(raw).length} sessions)` };
  }
  const rebuilt = await rebuildFromTranscripts(dir);
  const raw = rebuilt.map as RawStore;
  return {
    raw,
    carried: `rebuilt ${Object.keys(raw).length} sessions from ${rebuilt.scanned} transcript headers`,
  };
}
