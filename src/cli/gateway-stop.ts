import { loadConfig } from "../core/config.js";
import type { ConfigSectionsSource } from "../core/config-sections.js";
import { describeError } from "../core/errors.js";
import { processRuns } from "../core/process-runs.js";
import { connectGateway } from "./gateway-client.js";
import { type CliIO, EXIT } from "./io.js";
import { type LocalAnswer, localRequest } from "./local-request.js";

/** How long `clawdis gateway stop` waits for the process to exit: the gateway's own 30 s stop deadline, and some. */
export const GATEWAY_STOP_WAIT_MS = 40_000;
/** How often it looks whether the process is gone (a process exit has no event another process can wait on). */
const EXIT_POLL_MS = 100;

export interface GatewayStopOptions {
  waitMs?: number;
  /** Whether `pid` still runs (tests may pass their own). */
  isAlive?: (pid: number) => boolean;
  sleep?: (ms: number) => Promise<void>;
}

/**
 * `clawdis gateway stop`: asks the gateway that runs on this state directory to stop (`POST /api/stop` with the
 * token of `<state>/gateway.token`; it then stops as on SIGTERM: drains, tells the people whose turns it stops),
 * and waits until that process has exited. Exit 0 once it is gone; 1 when no gateway runs (said so), when it
 * refuses, or when it is still there after `waitMs`; 2 for a config that does not load (thrown).
 */
export async function runGatewayStop(
  io: CliIO,
  sections?: ConfigSectionsSource,
  options: GatewayStopOptions = {},
): Promise<number> {
  const { config } = loadConfig(io.env, sections ? await sections(io.env) : undefined);
  const connection = await connectGateway(config, io.env);
  if (!connection) {
    io.stderr("clawdis: no gateway is running on this state directory: nothing to stop\n");
    return EXIT.failed;
  }
  let answer: LocalAnswer;
  try {
    answer = await localRequest(`${connection.url}/api/stop`, {
      method: "POST",
      headers: { authorization: `Bearer ${connection.token}` },
      timeoutMs: 5000,
    });
  } catch (error) {
    io.stderr(
      `clawdis: the gateway at ${connection.url} did not take the stop request: ${describeError(error)}\n`,
    );
    return EXIT.failed;
  }
  const { status, text } = answer;
  if (status !== 202) {
    io.stderr(`clawdis: the gateway at ${connection.url} answered ${status}: ${text.slice(0, 300)}\n`);
    return EXIT.failed;
  }
  const pid = parsePid(text);
  if (pid === undefined) {
    io.stderr(
      `clawdis: the gateway at ${connection.url} said it stops but not its pid: ${text.slice(0, 300)}\n`,
    );
    return EXIT.failed;
  }
  io.stderr(`stopping the gateway (pid ${pid}) at ${connection.url}…\n`);
  const isAlive = options.isAlive ?? processRuns;
  const sleep = options.sleep ?? ((ms: number) => new Promise<void>((r) => setTimeout(r, ms)));
  const waitMs = options.waitMs ?? GATEWAY_STOP_WAIT_MS;
  for (let waited = 0; isAlive(pid); waited += EXIT_POLL_MS) {
    if (waited >= waitMs) {
      io.stderr(`clawdis: the gateway (pid ${pid}) is still running after ${Math.round(waitMs / 1000)} s\n`);
      return EXIT.failed;
    }
    await sleep(EXIT_POLL_MS);
  }
  io.stderr("the gateway stopped\n");
  return EXIT.ok;
}

function parsePid(text: string): number | undefined {
  try {
    const body = JSON.parse(text) as { pid?: unknown };
    return typeof body.pid === "number" && Number.isInteger(body.pid) && body.pid > 0 ? body.pid : undefined;
  } catch {
    return undefined;
  }
}
