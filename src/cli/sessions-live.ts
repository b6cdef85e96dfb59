import { readFile } from "node:fs/promises";
import { resolve } from "node:path";
import { type Env, gatewayTokenPath } from "../core/paths.js";
import { SESSION_PHASES, type SessionPhase } from "../runtime/session/phase.js";
import { liveGatewayUrls } from "./gateway-client.js";
import { localRequest } from "./local-request.js";

/** How long `clawdis sessions --json` waits for the running gateway's list before leaving the phases out. */
export const LIVE_SESSIONS_TIMEOUT_MS = 2000;

/**
 * What the running gateway says of the loaded sessions (`GET /api/sessions`, their `phase`):
 * - `{ phases }`: the phase of each session of the store it holds loaded (none when it keeps another store);
 * - `{ none }`: a gateway of this state directory runs but gave no usable list (why, for stderr);
 * - undefined: no gateway runs on this state directory (then nothing is asked).
 */
export type LivePhases = { phases: ReadonlyMap<string, SessionPhase> } | { none: string } | undefined;

/**
 * Asks the live gateway of this state directory (found through its lock and address file, no config read) for
 * its sessions, when it keeps the store at `storePath`.
 */
export async function livePhases(
  env: Env,
  storePath: string,
  timeoutMs = LIVE_SESSIONS_TIMEOUT_MS,
): Promise<LivePhases> {
  const urls = await liveGatewayUrls(env);
  if (urls.length === 0) return undefined;
  const token = await readFile(gatewayTokenPath(env), "utf8").then(
    (text) => text.trim(),
    () => "",
  );
  let why = "it did not answer";
  for (const url of urls) {
    let body: unknown;
    try {
      const answer = await localRequest(`${url}/api/sessions`, {
        headers: token ? { authorization: `Bearer ${token}` } : {},
        timeoutMs,
      });
      if (answer.status < 200 || answer.status > 299) {
        why = `it answered HTTP ${answer.status}`;
        continue;
      }
      body = JSON.parse(answer.text);
    } catch (error) {
      why =
        error instanceof Error && error.name === "TimeoutError" ? `no answer within ${timeoutMs} ms` : why;
      continue;
    }
    return phasesFrom(body, storePath) ?? { none: `the running gateway at ${url} answered no session list` };
  }
  return { none: `the running gateway at ${urls[0]} gave no session phases: ${why}` };
}

/**
 * The phases in a `GET /api/sessions` body (rows without a known phase are left out); none when the body lists
 * another store than `storePath`; undefined when it is no session list. Pure.
 */
export function phasesFrom(
  body: unknown,
  storePath: string,
): { phases: Map<string, SessionPhase> } | undefined {
  if (typeof body !== "object" || body === null) return undefined;
  const { path, sessions } = body as { path?: unknown; sessions?: unknown };
  if (typeof path !== "string" || !Array.isArray(sessions)) return undefined;
  const phases = new Map<string, SessionPhase>();
  // A gateway that keeps another store says nothing about this one's sessions.
  if (resolve(path) !== resolve(storePath)) return { phases };
  for (const row of sessions as unknown[]) {
    if (typeof row !== "object" || row === null) continue;
    const { key, phase } = row as { key?: unknown; phase?: unknown };
    if (typeof key === "string" && SESSION_PHASES.includes(phase as SessionPhase))
      phases.set(key, phase as SessionPhase);
  }
  return { phases };
}
