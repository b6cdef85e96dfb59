import { appendFile, lstat, mkdir, readdir, rename, rm } from "node:fs/promises";
import { join } from "node:path";
import type { Logger } from "../core/logger.js";
import { lastInteractionOf } from "./lifecycle.js";
import {
  type CleanupLimits,
  type CleanupPlan,
  type PlannedPrune,
  planCleanup,
  type SizedEntry,
} from "./plan-cleanup.js";
import { archiveDirOf } from "./session-paths.js";
import type { SessionStore } from "./store.js";
import type { SessionMap } from "./types.js";

/**
 * Carries out session upkeep (plan-cleanup.ts decides): for each planned entry, removes it from the store with the
 * store's locked update (only if it is still the entry planned on and its session is not in use), then moves its
 * transcript `<storeDir>/<id>.jsonl` and its folder `<storeDir>/<id>/` into `<storeDir>/archive/` (with `purge`:
 * deletes them), and appends the removed entry to `archive/pruned.jsonl` so that it can be put back by hand.
 * Files another entry of the store still uses (the same session id) are left where they are.
 */

export type CleanupAction = "dry-run" | "archive" | "purge";

export interface PrunedRow extends PlannedPrune {
  /** What became of it: `planned` (dry run), `archived`, `deleted`, or `skipped` (changed or in use meanwhile). */
  done: "planned" | "archived" | "deleted" | "skipped";
}

export interface CleanupReport {
  path: string;
  archiveDir: string;
  action: CleanupAction;
  limits: CleanupLimits;
  pruned: PrunedRow[];
  entries: CleanupPlan["entries"];
  bytes: CleanupPlan["bytes"];
  unmet: CleanupPlan["unmet"];
}

export interface CleanupDeps {
  store: SessionStore;
  primaryKey: string;
  limits: CleanupLimits;
  now: number;
  /** True while the session of `key` is loaded or has work in the running gateway: it is left alone. */
  inUse: (key: string) => boolean;
  logger: Logger;
}

/** The bytes taken by `path` (a file, or a folder and everything in it; 0 when missing). Links are not followed. */
export async function bytesOf(path: string): Promise<number> {
  const info = await lstat(path).catch(() => undefined);
  if (!info) return 0;
  if (!info.isDirectory()) return info.size;
  const names = await readdir(path).catch(() => [] as string[]);
  let sum = 0;
  for (const name of names) sum += await bytesOf(join(path, name));
  return sum;
}

/** Each entry of `map` with the bytes of its transcript and its session folder. */
export async function sizeEntries(storeDir: string, map: SessionMap): Promise<SizedEntry[]> {
  const sized: SizedEntry[] = [];
  for (const [key, entry] of Object.entries(map)) {
    const bytes =
      (await bytesOf(join(storeDir, `${entry.sessionId}.jsonl`))) +
      (await bytesOf(join(storeDir, entry.sessionId)));
    sized.push({ key, entry, bytes });
  }
  return sized;
}

/** The plan for the store as it is now, and (unless `action` is "dry-run") its execution. */
export async function runCleanup(deps: CleanupDeps, action: CleanupAction): Promise<CleanupReport> {
  const { store } = deps;
  const map = await store.load();
  const sessions = await sizeEntries(store.dir, map);
  const busy = new Set(sessions.filter((s) => deps.inUse(s.key)).map((s) => s.key));
  const plan = planCleanup({
    sessions,
    primaryKey: deps.primaryKey,
    busy,
    now: deps.now,
    limits: deps.limits,
  });
  const archiveDir = archiveDirOf(store.dir);
  const pruned: PrunedRow[] = [];
  for (const planned of plan.prune) {
    if (action === "dry-run") {
      pruned.push({ ...planned, done: "planned" });
      continue;
    }
    pruned.push({ ...planned, done: await pruneOne(deps, planned, action, archiveDir) });
  }
  const skipped = pruned.filter((p) => p.done === "skipped");
  return {
    path: store.path,
    archiveDir,
    action,
    limits: deps.limits,
    pruned,
    entries: { before: plan.entries.before, after: plan.entries.after + skipped.length },
    bytes: {
      before: plan.bytes.before,
      after: plan.bytes.after + skipped.reduce((sum, p) => sum + p.bytes, 0),
    },
    unmet: plan.unmet,
  };
}

/** Raised inside the store update when the entry is no longer the one planned on, or its session is in use. */
class Changed extends Error {}

async function pruneOne(
  deps: CleanupDeps,
  planned: PlannedPrune,
  action: "archive" | "purge",
  archiveDir: string,
): Promise<PrunedRow["done"]> {
  const { store, logger } = deps;
  let removed: Record<string, unknown> | undefined;
  try {
    await store.update(planned.key, (current) => {
      const same =
        current !== undefined &&
        current.sessionId === planned.sessionId &&
        (lastInteractionOf(current) ?? null) === planned.lastActiveAt;
      if (!same || deps.inUse(planned.key)) throw new Changed();
      removed = current;
      return undefined;
    });
  } catch (error) {
    if (error instanceof Changed) return "skipped";
    throw error;
  }
  // Files another key still points at stay (a session id shared by hand).
  const map = await store.load();
  const shared = Object.values(map).some((e) => e.sessionId === planned.sessionId);
  const files = [`${planned.sessionId}.jsonl`, planned.sessionId];
  if (!shared) {
    if (action === "purge") {
      for (const name of files) await rm(join(store.dir, name), { recursive: true, force: true });
    } else {
      await mkdir(archiveDir, { recursive: true, mode: 0o700 });
      for (const name of files) await moveIfThere(join(store.dir, name), join(archiveDir, name), deps.now);
      await appendFile(
        join(archiveDir, "pruned.jsonl"),
        `${JSON.stringify({ key: planned.key, reason: planned.reason, prunedAt: deps.now, entry: removed })}\n`,
        { mode: 0o600 },
      );
    }
  }
  logger.info(action === "purge" ? "session pruned and deleted" : "session pruned to the archive", {
    sessionKey: planned.key,
    sessionId: planned.sessionId,
    reason: planned.reason,
  });
  return action === "purge" ? "deleted" : "archived";
}

/** Renames `from` to `to` when `from` exists; a `to` already taken gets `-<now>` before its ending. */
async function moveIfThere(from: string, to: string, now: number): Promise<void> {
  if (!(await lstat(from).catch(() => undefined))) return;
  const taken = await lstat(to).catch(() => undefined);
  const target = taken ? to.replace(/(\.jsonl)?$/, `-${now}$1`) : to;
  await rename(from, target);
}
