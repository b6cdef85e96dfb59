import { randomUUID } from "node:crypto";
import type { ClawdisConfig } from "../core/config-schema.js";
import { ClawdisError, isClawdisError } from "../core/errors.js";
import { createLogger } from "../core/logger.js";
import { configPath, type Env, gatewayTokenPath, stateDir } from "../core/paths.js";
import type { OutcomeBody } from "../plugin-api/outcome-body.js";
import type { TurnOutcome } from "../plugin-api/types.js";
import { describeHolder, ownForAgent } from "../runtime/own-state-dir.js";
import { LiveReply, useColor } from "./agent-live.js";
import { streamAgentTurn } from "./agent-stream.js";
import type { GatewayDeps } from "./gateway.js";
import { connectGateway } from "./gateway-client.js";
import { type CliIO, EXIT } from "./io.js";

type AgentReply = OutcomeBody;

/** How long `clawdis agent` waits for a gateway that owns the state directory but does not answer yet. */
export const AGENT_WAIT_MS = 120_000;

/**
 * `clawdis agent -m <text> [--session <key>] [--json]`: one turn. Through the running gateway when one answers;
 * when a gateway owns the state directory but does not answer (starting, stalled), it waits for it; in-process
 * only when it can take the state directory itself (so a gateway starting meanwhile waits for this turn, and
 * nothing is answered twice or written beside a running gateway). A gateway that answers but refuses the token
 * is an error, never a reason to run in-process.
 *
 * Through the gateway the turn is streamed (see streamAgentTurn). On a terminal (and without `--json`) the reply
 * is printed as it comes, tool calls as dim lines (no colour with NO_COLOR); piped, only the final reply is
 * printed. A gateway that goes away mid-turn is one line on stderr (the message is safe in its journal), exit 1.
 * The in-process path prints the final reply in every case.
 *
 * A config file that does not load does not stop a message to a running gateway (see configForAgent): it is sent,
 * with a warning on stderr. Without a gateway it is the config error (exit 2).
 */
export async function runAgent(
  opts: { message?: string; session?: string; json?: boolean },
  io: CliIO,
  deps: GatewayDeps,
): Promise<number> {
  if (!opts.message || opts.message.trim().length === 0) {
    throw new ClawdisError("USAGE", "agent needs a message: clawdis agent -m <text>");
  }
  const { config, invalid } = await configForAgent(io.env, deps);
  const dir = stateDir(io.env);
  const logger = createLogger({ level: config.logging.level });
  const until = Date.now() + AGENT_WAIT_MS;
  let reply: AgentReply | undefined;
  let live: LiveReply | undefined;
  let toldWaiting = false;
  // One messageId for every try: if a try reached the gateway after all, the next one is a duplicate, not a second turn.
  const messageId = randomUUID();
  while (reply === undefined) {
    const connection = await connectGateway(config, io.env, toldWaiting ? 3000 : undefined);
    // Only a running gateway can take a message while the file does not load: it runs on its last good config.
    if (!connection && invalid) throw invalid;
    if (connection && invalid) io.stderr(`${invalidConfigWarning(invalid)}\n`);
    if (connection) {
      live = io.isTTY && !opts.json ? new LiveReply(io.stdout, useColor(io.isTTY, io.env)) : undefined;
      reply = await streamAgentTurn(
        connection,
        { message: opts.message, messageId, ...(opts.session ? { session: opts.session } : {}) },
        gatewayTokenPath(io.env),
        live,
      );
      break;
    }
    const owned = await ownForAgent(
      dir,
      { now: Date.now, sleep: (ms) => new Promise((r) => setTimeout(r, ms)), logger },
      Math.max(0, until - Date.now()),
    );
    if ("lock" in owned) {
      try {
        reply = await runInProcess(opts.message, opts.session, messageId, io, deps);
      } finally {
        await owned.lock.release();
      }
      break;
    }
    if (Date.now() >= until) {
      throw new ClawdisError(
        "GATEWAY_UNREACHABLE",
        `${describeHolder(owned.gateway)} owns ${dir} but has not answered for ${AGENT_WAIT_MS / 1000} s; check it with \`clawdis status\``,
      );
    }
    if (!toldWaiting) {
      logger.info(`waiting for ${describeHolder(owned.gateway)} to answer`);
      toldWaiting = true;
    }
    await new Promise((r) => setTimeout(r, 200));
  }
  if (reply === undefined) throw new Error("unreachable: no reply");
  if (opts.json) io.stdout(`${JSON.stringify(reply)}\n`);
  else if (live) live.finish(reply);
  else for (const p of reply.payloads) io.stdout(`${p.text}\n`);
  const ok = reply.meta.stopReason === "end" || reply.meta.stopReason === "command";
  return ok ? EXIT.ok : EXIT.failed;
}

/**
 * The config `clawdis agent` finds the gateway with, as the read-only commands load it: through the config cache
 * (core/config-cache.ts) when `deps.configFingerprint` is known, so an unchanged file loads neither zod nor JSON5,
 * with the built-in plugins' sections checked (those of `plugins.load` are not loaded here). When the file does
 * not load (a config error, exit 2), the defaults and that error: a running gateway is found through the state
 * directory (its lock and `gateway.json`) and needs only the token, so the turn can still go to it; in-process the
 * error stands.
 */
export async function configForAgent(
  env: Env,
  deps: Pick<GatewayDeps, "configSections" | "configFingerprint">,
): Promise<{ config: ClawdisConfig; invalid?: ClawdisError }> {
  try {
    const { loadConfigCached } = await import("../core/config-cache.js");
    return { config: (await loadConfigCached(env, deps.configSections, deps.configFingerprint)).config };
  } catch (error) {
    if (!isClawdisError(error) || error.exitCode !== EXIT.usage) throw error;
    const { parseConfigText } = await import("../core/config.js");
    return { config: parseConfigText("{}", configPath(env)), invalid: error };
  }
}

/** The stderr line when the message goes to a running gateway although the config file does not load. Pure. */
export function invalidConfigWarning(error: ClawdisError): string {
  return `clawdis: warning: the config file does not load (${error.message}); the running gateway keeps running on its last good config, so the message goes to it. Fix the file: the gateway takes it when it is saved`;
}

async function runInProcess(
  message: string,
  session: string | undefined,
  messageId: string,
  io: CliIO,
  deps: GatewayDeps,
): Promise<AgentReply> {
  const { createGateway } = await import("./gateway.js");
  const { loadGatewayConfigAtStart } = await import("../host/plugin-loader.js");
  const { outcomeBody } = await import("../plugin-api/outcome-body.js");
  // Loaded as the gateway's start loads it (through the config cache, plugins of `plugins.load` included).
  const loaded = await loadGatewayConfigAtStart(io.env, deps.configSections, deps.configFingerprint);
  const gateway = await createGateway(io, deps, { listen: false, loaded });
  await gateway.start();
  try {
    const result = await gateway.receive(
      {
        channel: "cli",
        chatId: `cli:${randomUUID()}`,
        chatType: "direct",
        senderId: "local",
        senderName: "owner",
        messageId,
        text: message,
        receivedAt: Date.now(),
        ...(session ? { sessionKey: session } : {}),
      },
      { local: true },
    );
    if (result.status !== "accepted") throw new ClawdisError("IO", `message not accepted: ${result.status}`);
    const outcome: TurnOutcome = await result.done;
    return outcomeBody(outcome);
  } finally {
    await gateway.stop();
  }
}
