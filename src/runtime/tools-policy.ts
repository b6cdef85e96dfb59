import { selectTools } from "../agent/tools/index.js";
import type { Authority, InboundMessage, ToolDefinition, ToolFileAccess } from "../plugin-api/types.js";
import { authorityOf } from "../routing/inbound-pipeline/admission-steps.js";
import { sessionKindOf } from "../routing/session-key.js";

/**
 * Which tools a turn is offered, and whether its file tools are confined to the session's workspace (docs/agent.md,
 * Who gets tools). Pure, table-tested; `toolsForTurn` below applies it to the tools there are (the gateway calls it).
 *
 * - the primary session (`mainKey`, or `global` under `scope: "global"`): the owner gets `tools.main`, with file
 *   tools anywhere but the state directory's secrets; anyone else gets what `tools.people["<channel>:<sender>"]`
 *   lists for them (default none), confined to the workspace;
 * - a group session (`group:<id>`): `tools.groups` for whoever writes, the owner too, confined to the group's folder;
 * - automated input (webhooks): exactly what its source grants (`allowedTools`), confined, whatever the session;
 * - the owner's input that carries `allowedTools` (the OpenAI-compatible API: `gateway.openai.tools`): exactly those,
 *   whatever the session, as the owner (`"*"` takes in `bash`), confined to the workspace outside the primary session;
 * - any other session key: none.
 * `"*"` means every tool; given to anyone but the owner it leaves out `bash`, which no confinement holds, and the
 * job tools that go with it: they reach a non-owner only when listed by name.
 */

/** What `"*"` gives only the owner: `bash`, and the tools of the background jobs it starts (src/jobs/). */
const BASH_AND_ITS_JOBS = ["bash", "job_status", "job_output", "job_kill"];

/** The tools config as the policy reads it (`inbound.reply.agent.tools`). */
export interface ToolsConfig {
  main: readonly string[];
  groups: readonly string[];
  /** `"<channel>:<senderId>"` → tools that person gets in the primary session (they are not the owner). */
  people: Readonly<Record<string, readonly string[]>>;
}

export interface ToolsPolicyInput {
  sessionKey: string;
  /** The primary session's key: `mainKey`, or `global` under `scope: "global"`. */
  primaryKey: string;
  authority: Authority;
  channel: string;
  senderId: string;
  /** Automated input, or the owner's through the OpenAI-compatible API: what its source grants. */
  allowedTools?: readonly string[];
  tools: ToolsConfig;
}

export interface ToolGrant {
  /** Tool names, or `"*"` for all (see `allowBashByStar`). */
  names: readonly string[];
  /** Whether `"*"` takes in `bash` too: only for the owner. */
  allowBashByStar: boolean;
  /** File tools resolve inside the session's workspace only. */
  confined: boolean;
}

const NONE: ToolGrant = { names: [], allowBashByStar: false, confined: true };

/** The key `tools.people` uses for a sender. */
export function personKey(channel: string, senderId: string): string {
  return `${channel}:${senderId}`;
}

/** What the policy tells apart: the primary session, and otherwise the key's kind (`sessionKindOf`). */
type PolicySession = "primary" | "group" | "other";

function policySession(sessionKey: string, primaryKey: string): PolicySession {
  if (sessionKey === primaryKey) return "primary";
  return sessionKindOf(sessionKey, primaryKey) === "group" ? "group" : "other";
}

export function toolsPolicy(input: ToolsPolicyInput): ToolGrant {
  const { authority, tools } = input;
  if (authority === "automated") return { ...NONE, names: input.allowedTools ?? [] };
  const session = policySession(input.sessionKey, input.primaryKey);
  if (authority === "owner" && input.allowedTools !== undefined) {
    return { names: input.allowedTools, allowBashByStar: true, confined: session !== "primary" };
  }
  switch (session) {
    case "primary":
      if (authority === "owner") return { names: tools.main, allowBashByStar: true, confined: false };
      return { ...NONE, names: tools.people[personKey(input.channel, input.senderId)] ?? [] };
    case "group":
      return { ...NONE, names: tools.groups };
    case "other":
      return NONE;
  }
}

/**
 * The tools with each call told where its file tools may go (`ToolContext.files`): confined calls to the call's
 * working directory (the session's workspace), every call away from `secrets`.
 */
export function withFileAccess(
  tools: readonly ToolDefinition[],
  access: { confined: boolean; secrets: ToolFileAccess["secrets"] },
): ToolDefinition[] {
  return tools.map((tool) => ({
    name: tool.name,
    description: tool.description,
    parameters: tool.parameters,
    execute: (args, context) =>
      tool.execute(args, {
        ...context,
        files: { secrets: access.secrets, ...(access.confined ? { confinedTo: context.cwd } : {}) },
      }),
  }));
}

/** What `toolsForTurn` reads: the turn's session and message, the tools there are, the config, the secrets. */
export interface TurnToolsInput {
  sessionKey: string;
  /** The primary session's key: `mainKey`, or `global` under `scope: "global"`. */
  primaryKey: string;
  message: Pick<InboundMessage, "authority" | "automated" | "channel" | "senderId" | "allowedTools">;
  /**
   * Every tool there is (built-in ones first, then the plugins'): asked only when the grant names a tool (most
   * turns of a group or of a person without tools build none).
   */
  all: () => readonly ToolDefinition[];
  tools: ToolsConfig;
  /** The state directory's files no tool call may touch (src/runtime/state-secrets.ts). */
  secrets: ToolFileAccess["secrets"];
}

/**
 * The turn's tools: what `toolsPolicy` grants the message's authority in this session (a message without one
 * counts as a transport's, `authorityOf`), each call told where its file tools may go (the session's workspace
 * only, when confined; never the state directory's secrets). Pure.
 */
export function toolsForTurn(input: TurnToolsInput): ToolDefinition[] {
  const { message } = input;
  const grant = toolsPolicy({
    sessionKey: input.sessionKey,
    primaryKey: input.primaryKey,
    authority: message.authority ?? authorityOf(message, false),
    channel: message.channel,
    senderId: message.senderId,
    ...(message.allowedTools ? { allowedTools: message.allowedTools } : {}),
    tools: input.tools,
  });
  if (grant.names.length === 0) return [];
  return withFileAccess(
    selectTools([...input.all()], grant.names, grant.allowBashByStar ? [] : BASH_AND_ITS_JOBS),
    {
      confined: grant.confined,
      secrets: input.secrets,
    },
  );
}
