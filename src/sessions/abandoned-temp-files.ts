import { lstat, readdir, unlink } from "node:fs/promises";
import { basename, dirname, join } from "node:path";
import { describeError } from "../core/errors.js";
import type { Logger } from "../core/logger.js";
import { processRuns } from "../core/process-runs.js";

/**
 * The temp files an atomic write of `file` makes next to it: store-write.ts writes `.<name>.tmp-<pid>-<8 hex>`
 * (the session store, restart.json, plugin files), journal.ts and state-lock.ts write `<name>.tmp-<pid>`. Each is
 * renamed over its file or removed by the writer, so one is left only when its writer was killed (or lost power)
 * in the middle of the write.
 */
function tempNames(file: string): RegExp[] {
  const name = basename(file).replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
  return [new RegExp(`^\\.${name}\\.tmp-(\\d+)-[0-9a-f]{8}$`), new RegExp(`^${name}\\.tmp-(\\d+)$`)];
}

/** A temp file this old is abandoned whoever wrote it: no write of ours takes an hour. */
export const ABANDONED_AFTER_MS = 60 * 60 * 1000;

/** The writer's pid when `name` is the name of one of `file`'s temp files (see tempNames), else undefined. */
export function tempFileWriter(file: string, name: string): number | undefined {
  return writerOf(tempNames(file), name);
}

function writerOf(patterns: readonly RegExp[], name: string): number | undefined {
  for (const pattern of patterns) {
    const match = pattern.exec(name);
    if (match) return Number(match[1]);
  }
  return undefined;
}

export interface TempSweepOptions {
  logger: Logger;
  /** Epoch ms to judge the files' ages by: the file system's clock (Date.now()), not an injected one. */
  now: number;
  /** For tests; default processRuns. */
  runs?: (pid: number) => boolean;
}

/**
 * Removes the temp files left next to `files` by atomic writes that will never finish (see tempNames), and
 * returns their paths. Contract:
 * - a file is removed when its writer (the pid in its name) no longer runs, or when it is older than
 *   ABANDONED_AFTER_MS (a pid reused by another process; a writer in another pid namespace or on another host);
 * - only names of those files' temp files, in their own folders (a folder may be a person's own, such as a store
 *   kept in the home folder): never a file of this process (a write of ours may be in progress), never anything
 *   but a regular file;
 * - removing a live writer's temp file (another pid namespace, where its pid does not run here) costs that writer
 *   a retry (store-write.ts writes again when its temp file is gone), never a file;
 * - best effort: a folder or file that cannot be read or removed is logged and skipped; nothing throws.
 */
export async function removeAbandonedTempFiles(
  files: readonly string[],
  options: TempSweepOptions,
): Promise<string[]> {
  const runs = options.runs ?? processRuns;
  const byDir = new Map<string, string[]>();
  for (const file of files) byDir.set(dirname(file), [...(byDir.get(dirname(file)) ?? []), file]);
  const removed: string[] = [];
  for (const [dir, targets] of byDir) {
    const patterns = targets.flatMap(tempNames);
    let names: string[];
    try {
      names = await readdir(dir);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== "ENOENT") {
        options.logger.warn("could not look for abandoned temp files", { dir, error: describeError(error) });
      }
      continue;
    }
    for (const name of names) {
      const pid = writerOf(patterns, name);
      if (pid === undefined || pid === process.pid) continue;
      const path = join(dir, name);
      try {
        const info = await lstat(path);
        if (!info.isFile()) continue;
        if (runs(pid) && options.now - info.mtimeMs < ABANDONED_AFTER_MS) continue;
        await unlink(path);
        removed.push(path);
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code === "ENOENT") continue;
        options.logger.warn("could not remove an abandoned temp file", { path, error: describeError(error) });
      }
    }
  }
  if (removed.length > 0) {
    options.logger.warn(
      "removed temp files left by writes that were cut short (a process killed while writing); the files they were to replace are intact",
      { count: removed.length, files: removed.slice(0, 5).join(", ") },
    );
  }
  return removed;
}
