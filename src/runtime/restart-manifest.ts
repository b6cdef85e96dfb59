import { readFile, rm } from "node:fs/promises";
import { join } from "node:path";
import { describeError } from "../core/errors.js";
import type { Logger } from "../core/logger.js";
import { writePrivateFile } from "../plugin-api/write-private-file.js";

/**
 * `<state>/restart.json`: what an in-process restart hands to the gateway it starts next. Written atomically
 * (temp file, fsync, rename, directory fsync; 0600) before the old gateway stops, read and removed by the next
 * start (also a real start, when a crash came in between). It holds hints only — which sessions to load warm,
 * why the restart happened — never state: every message and reply is in the journal and the transcripts, so a
 * lost or bad manifest costs only a cold start of those sessions.
 */
export interface RestartManifest {
  version: 1;
  /** Why the gateway restarted, for `/status` ("config change"). */
  reason: string;
  /** Epoch ms when the restart began. */
  at: number;
  /** The process that wrote it. */
  pid: number;
  /** The sessions held warm when the restart began (busy or recently used); idle, unloaded ones are not listed. */
  sessions: ManifestSession[];
}

export interface ManifestSession {
  key: string;
  /** A turn ran or work waited when the restart began. */
  busy: boolean;
}

export function restartManifestPath(stateDir: string): string {
  return join(stateDir, "restart.json");
}

export async function writeRestartManifest(stateDir: string, manifest: RestartManifest): Promise<void> {
  await writePrivateFile(restartManifestPath(stateDir), `${JSON.stringify(manifest, null, 2)}\n`);
}

/**
 * Reads the manifest and removes it (it is used once). None: undefined. One that does not parse or is not a
 * version 1 manifest: a warning naming the file and what is wrong, then it is removed and undefined returned (the
 * start goes on cold: nothing but warmth is lost).
 */
export async function takeRestartManifest(
  stateDir: string,
  logger: Pick<Logger, "warn">,
): Promise<RestartManifest | undefined> {
  const path = restartManifestPath(stateDir);
  let text: string;
  try {
    text = await readFile(path, "utf8");
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return undefined;
    logger.warn("could not read the restart manifest; starting without it", {
      path,
      error: describeError(error),
    });
    return undefined;
  }
  await rm(path, { force: true });
  const parsed = parseRestartManifest(text);
  if (typeof parsed === "string") {
    logger.warn("the restart manifest is not usable; starting without it (sessions load when used)", {
      path,
      problem: parsed,
    });
    return undefined;
  }
  return parsed;
}

/** The manifest in `text`, or what is wrong with it. Pure. */
export function parseRestartManifest(text: string): RestartManifest | string {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    return `not JSON: ${describeError(error)}`;
  }
  if (typeof value !== "object" || value === null || Array.isArray(value)) return "not a JSON object";
  const m = value as Record<string, unknown>;
  if (m.version !== 1) return `version ${JSON.stringify(m.version)} is not 1`;
  if (typeof m.reason !== "string") return "reason is not a string";
  if (typeof m.at !== "number" || !Number.isFinite(m.at)) return "at is not a time";
  if (typeof m.pid !== "number") return "pid is not a number";
  if (!Array.isArray(m.sessions)) return "sessions is not a list";
  const sessions: ManifestSession[] = [];
  for (const [i, s] of m.sessions.entries()) {
    const session = s as Record<string, unknown> | null;
    if (typeof session?.key !== "string" || session.key.length === 0)
      return `sessions[${i}].key is not a key`;
    sessions.push({ key: session.key, busy: session.busy === true });
  }
  return { version: 1, reason: m.reason, at: m.at, pid: m.pid, sessions };
}
