import { readFile } from "node:fs/promises";
import { join } from "node:path";
import type { ClawdisConfig } from "../core/config-schema.js";
import { type Env, gatewayTokenPath, stateDir } from "../core/paths.js";
import { readToken } from "../runtime/gateway-token.js";

/** Where a running gateway listens: `<state>/gateway.json`, written at start, removed at stop. */
export interface GatewayAddressFile {
  pid: number;
  url: string;
  startedAt: number;
}

export function gatewayAddressPath(env: Env): string {
  return join(stateDir(env), "gateway.json");
}

export interface GatewayConnection {
  url: string;
  token: string;
}

/**
 * Finds the running gateway: the address file if its process is alive, else the configured bind:port; then
 * checks that it answers `GET /api/status` with the token. Undefined when no gateway answers.
 */
export async function findGateway(
  config: ClawdisConfig,
  env: Env,
  timeoutMs = 1000,
): Promise<GatewayConnection | undefined> {
  const token = await readToken(gatewayTokenPath(env));
  if (!token) return undefined;
  const candidates: string[] = [];
  try {
    const file = JSON.parse(await readFile(gatewayAddressPath(env), "utf8")) as GatewayAddressFile;
    if (typeof file.url === "string" && isAlive(file.pid)) candidates.push(file.url);
  } catch {
    // No address file: fall back to the configured address.
  }
  const host =
    config.gateway.bind === "0.0.0.0" || config.gateway.bind === "::" ? "127.0.0.1" : config.gateway.bind;
  const configured = `http://${host.includes(":") ? `[${host}]` : host}:${config.gateway.port}`;
  if (!candidates.includes(configured)) candidates.push(configured);
  for (const url of candidates) {
    try {
      const res = await fetch(`${url}/api/status`, {
        headers: { authorization: `Bearer ${token}` },
        signal: AbortSignal.timeout(timeoutMs),
      });
      if (res.ok) {
        await res.arrayBuffer();
        return { url, token };
      }
    } catch {
      // Not this one.
    }
  }
  return undefined;
}

function isAlive(pid: number): boolean {
  if (!Number.isInteger(pid) || pid <= 0) return false;
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === "EPERM";
  }
}
