import { randomUUID } from "node:crypto";
import { loadConfig } from "../core/config.js";
import { ClawdisError } from "../core/errors.js";
import type { OutcomeBody } from "../plugin-api/outcome-body.js";
import type { TurnOutcome } from "../plugin-api/types.js";
import type { GatewayDeps } from "./gateway.js";
import { findGateway } from "./gateway-client.js";
import { type CliIO, EXIT } from "./io.js";

type AgentReply = OutcomeBody;

/**
 * `clawdis agent -m <text> [--session <key>] [--json]`: one turn, through the running gateway when there is one,
 * else in-process (the store's lock serializes its writes with any other process).
 */
export async function runAgent(
  opts: { message?: string; session?: string; json?: boolean },
  io: CliIO,
  deps: GatewayDeps,
): Promise<number> {
  if (!opts.message || opts.message.trim().length === 0) {
    throw new ClawdisError("USAGE", "agent needs a message: clawdis agent -m <text>");
  }
  const { config } = loadConfig(io.env);
  const connection = await findGateway(config, io.env);
  let reply: AgentReply;
  if (connection) {
    const res = await fetch(`${connection.url}/api/agent`, {
      method: "POST",
      headers: { authorization: `Bearer ${connection.token}`, "content-type": "application/json" },
      body: JSON.stringify({
        message: opts.message,
        channel: "cli",
        messageId: randomUUID(),
        ...(opts.session ? { session: opts.session } : {}),
      }),
    });
    const body = (await res.json()) as AgentReply & { message?: string };
    if (!res.ok)
      throw new ClawdisError(
        "GATEWAY_UNREACHABLE",
        `the gateway answered ${res.status}: ${body.message ?? "error"}`,
      );
    reply = body;
  } else {
    reply = await runInProcess(opts.message, opts.session, io, deps);
  }
  if (opts.json) io.stdout(`${JSON.stringify(reply)}\n`);
  else for (const p of reply.payloads) io.stdout(`${p.text}\n`);
  const ok = reply.meta.stopReason === "end" || reply.meta.stopReason === "command";
  return ok ? EXIT.ok : EXIT.failed;
}

async function runInProcess(
  message: string,
  session: string | undefined,
  io: CliIO,
  deps: GatewayDeps,
): Promise<AgentReply> {
  const { createGateway } = await import("./gateway.js");
  const { outcomeBody } = await import("../plugin-api/outcome-body.js");
  const gateway = await createGateway(io, deps, { listen: false });
  await gateway.start();
  try {
    const result = await gateway.receive(
      {
        channel: "cli",
        chatId: `cli:${randomUUID()}`,
        chatType: "direct",
        senderId: "local",
        senderName: "owner",
        messageId: randomUUID(),
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
