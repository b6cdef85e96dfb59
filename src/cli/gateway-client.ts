import { readFile } from "node:fs/promises";
import { join } from "node:path";
import type { ClawdisConfig } from "../core/config-schema.js";
import { ClawdisError } from "../core/errors.js";
import { type Env, gatewayTokenPath, stateDir } from "../core/paths.js";
import { processRuns } from "../core/process-runs.js";
import { stateOwnerOf } from "../runtime/state-lock.js";
import { type LocalAnswer, localRequest } from "./local-request.js";

/**
 * How local clients (`clawdis agent`, `chat`, `status`) find the running gateway: the address it wrote to
 * `<state>/gateway.json` when it started listening (if that process is alive), else `gateway.bind:gateway.port`.
 */

/** How long a client waits for the gateway before saying it is not running. */
export const GATEWAY_PROBE_TIMEOUT_MS = 1000;

/** `<state>/gateway.json`, written once the gateway listens, removed when it stops. */
export interface GatewayAddressFile {
  pid: number;
  url: string;
  startedAt: number;
}

export function gatewayAddressPath(env: Env): string {
  return join(stateDir(env), "gateway.json");
}

export interface TransportState {
  id: string;
  state: string;
  detail?: string;
  [field: string]: unknown;
}

/** What the running gateway said (`GET /api/status`), or that none answered at `url`. */
export type GatewayState =
  | { running: false; url: string }
  | { running: true; url: string; transports?: TransportState[]; error?: string; [field: string]: unknown };

export interface GatewayConnection {
  url: string;
  token: string;
}

/** The URL a local client uses for `gateway.bind:gateway.port` (a wildcard bind is reached over loopback). */
export function gatewayUrl(config: ClawdisConfig): string {
  const bind = config.gateway.bind;
  const host = bind === "0.0.0.0" ? "127.0.0.1" : bind === "::" ? "::1" : bind;
  return `http://${host.includes(":") ? `[${host}]` : host}:${config.gateway.port}`;
}

/**
 * Where to look, in order: the URL in the state directory's lock when a live gateway owns it, the address file
 * of a live gateway, then the configured address.
 */
async function candidateUrls(config: ClawdisConfig, env: Env): Promise<string[]> {
  const urls = await liveGatewayUrls(env);
  const configured = gatewayUrl(config);
  if (!urls.includes(configured)) urls.push(configured);
  return urls;
}

/**
 * The addresses a live gateway of this state directory wrote: the URL in the lock it owns, then its address file.
 * Empty when no live process claims the directory. Reads no config (cheap enough for `clawdis sessions`).
 */
export async function liveGatewayUrls(env: Env): Promise<string[]> {
  const urls: string[] = [];
  const owner = await stateOwnerOf(stateDir(env)).catch(() => undefined);
  if (owner?.kind === "gateway" && owner.url) urls.push(owner.url);
  try {
    const file = JSON.parse(await readFile(gatewayAddressPath(env), "utf8")) as GatewayAddressFile;
    if (typeof file.url === "string" && processRuns(file.pid) && !urls.includes(file.url))
      urls.push(file.url);
  } catch {
    // No address file (no gateway, or one that predates it).
  }
  return urls;
}

/**
 * Asks the gateway for `/api/status` with the token of `<state>/gateway.token`, waiting at most `timeoutMs` per
 * address. No answer (refused, timeout): not running. An answer that is not 200: running, with `error` saying
 * what it answered.
 */
export async function probeGateway(
  config: ClawdisConfig,
  env: Env,
  timeoutMs = GATEWAY_PROBE_TIMEOUT_MS,
): Promise<GatewayState> {
  const tokenPath = gatewayTokenPath(env);
  const token = await readFile(tokenPath, "utf8").then(
    (text) => text.trim() || undefined,
    () => undefined,
  );
  const urls = await candidateUrls(config, env);
  for (const url of urls) {
    let answer: LocalAnswer;
    try {
      answer = await localRequest(`${url}/api/status`, {
        headers: token ? { authorization: `Bearer ${token}` } : {},
        timeoutMs,
      });
    } catch {
      continue;
    }
    const { status, text } = answer;
    if (status < 200 || status > 299) {
      const why =
        status === 401
          ? token
            ? `it refused the token in ${tokenPath} (HTTP 401): the token file was replaced after the gateway started; restart the gateway, or put its token back`
            : `it wants a token and ${tokenPath} does not exist (HTTP 401)`
          : `it answered HTTP ${status}`;
      return { running: true, url, error: why };
    }
    let body: unknown;
    try {
      body = JSON.parse(text);
    } catch {
      return {
        running: true,
        url,
        error: "it answered something that is not JSON; is another program on this port?",
      };
    }
    if (typeof body !== "object" || body === null || Array.isArray(body)) {
      return { running: true, url, error: "it answered JSON that is not an object" };
    }
    // The gateway's own answer, under our `running` and `url` (which a body cannot override).
    const { running: _running, url: _url, ...rest } = body as Record<string, unknown>;
    return { running: true, url, ...rest };
  }
  return { running: false, url: urls[urls.length - 1]! };
}

/**
 * The running gateway and its token; undefined when none answers. A gateway that answers but refuses (a wrong
 * token, something else on the port) is an error saying so, never "not running".
 */
export async function connectGateway(
  config: ClawdisConfig,
  env: Env,
  timeoutMs = GATEWAY_PROBE_TIMEOUT_MS,
): Promise<GatewayConnection | undefined> {
  const state = await probeGateway(config, env, timeoutMs);
  if (!state.running) return undefined;
  if (state.error) {
    throw new ClawdisError("GATEWAY_UNREACHABLE", `a gateway answers at ${state.url} but ${state.error}`);
  }
  const token = (await readFile(gatewayTokenPath(env), "utf8")).trim();
  return { url: state.url, token };
}
