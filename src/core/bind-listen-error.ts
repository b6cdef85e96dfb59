import { ClawdisError } from "./errors.js";

/**
 * Maps a failure to listen on `gateway.bind` to a config error (CONFIG_INVALID, exit code 2) that names the key
 * and the value, instead of a stack trace. Pure.
 *
 * Contract:
 * - Only failures that the bind value causes are mapped: ENOTFOUND (the name does not resolve), EAI_AGAIN (the
 *   name could not be resolved now), EADDRNOTAVAIL (no interface of this machine has the address) and
 *   EAFNOSUPPORT (the machine has no IPv6, or no IPv4). The code is looked for on the error and its `cause` chain.
 * - Anything else (EADDRINUSE, EACCES, a bug) returns undefined: the caller reports it as it does today.
 * - `configPath`, when given, heads the message like every other config error (`invalid config <path>:`).
 */
export function bindListenError(error: unknown, bind: string, configPath?: string): ClawdisError | undefined {
  const code = errorCode(error);
  const value = JSON.stringify(bind);
  let problem: string;
  switch (code) {
    case "ENOTFOUND":
      problem = `${value} is not an address of this machine and no host name by that name resolves`;
      break;
    case "EAI_AGAIN":
      problem = `the host name ${value} could not be resolved (the name server did not answer)`;
      break;
    case "EADDRNOTAVAIL":
      problem = `no network interface of this machine has the address ${value}`;
      break;
    case "EAFNOSUPPORT":
      problem = `this machine does not support the address family of ${value}`;
      break;
    default:
      return undefined;
  }
  const hint = /^\[.*\]$/.test(bind)
    ? `write an IPv6 address without brackets, e.g. "${bind.slice(1, -1)}"`
    : 'use an address of this machine, or "127.0.0.1" for this machine only';
  const line = `gateway.bind: cannot listen on ${value}: ${problem} (${code}) — ${hint}`;
  const message = configPath === undefined ? line : `invalid config ${configPath}:\n  ${line}`;
  return new ClawdisError("CONFIG_INVALID", message, { cause: error });
}

const BIND_CODES = new Set(["ENOTFOUND", "EAI_AGAIN", "EADDRNOTAVAIL", "EAFNOSUPPORT"]);

/** The first bind-caused `code` on the error or its `cause` chain (bounded, in case of a cycle). */
function errorCode(error: unknown): string | undefined {
  let current = error;
  for (let depth = 0; depth < 8 && typeof current === "object" && current !== null; depth++) {
    const code = (current as { code?: unknown }).code;
    if (typeof code === "string" && BIND_CODES.has(code)) return code;
    current = (current as { cause?: unknown }).cause;
  }
  return undefined;
}
