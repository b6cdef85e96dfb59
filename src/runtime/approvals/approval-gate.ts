import { realpathSync, statSync } from "node:fs";
import { basename, dirname, join } from "node:path";
import { isInside, lexicalToolPath } from "../../agent/tools/tool-path.js";
import type { ToolGate, TurnHooks } from "../../agent/turn-hooks.js";
import type { StoredToolCall } from "../../sessions/types.js";
import { type ApprovalsSetting, approvalAction, PATH_TOOLS } from "./approval-policy.js";
import { allowedBy } from "./bash-allowlist.js";

/**
 * The approvals gate of a turn (docs/tools.md, Approvals): a `beforeTool` hook that runs a call, refuses it (the
 * policy says `deny`: the model reads why, and the loop guard counts it as a failed call), or asks (the batch parks:
 * `TurnHooks`, `ToolGate.ask`). The ask's `reason` is what the call will do in words (`describeCall`): the prompt
 * the person is shown names it. `decideGate` decides (pure); `approvalGate` reads what it needs from disk.
 */

/** What the gate reads of one call besides the policy and the allowlist. */
export interface GateFacts {
  tool: string;
  /** `bash`: the command (undefined when the arguments do not hold one). */
  command?: string;
  /** A path tool: whether its path lies outside the turn's workspace (undefined: no usable path). */
  outsideWorkspace?: boolean;
  /** The call in words (`describeCall`). */
  what: string;
}

/** The result a call the policy denies gets. */
export function deniedByPolicy(tool: string): string {
  return `Not run: the approvals policy (inbound.reply.agent.approvals) does not allow ${tool}.`;
}

/**
 * The gate of one call: the policy's action, where an `ask` for a `bash` command the allowlist holds runs. Pure.
 */
export function decideGate(
  setting: ApprovalsSetting | undefined,
  facts: GateFacts,
  allowlist: readonly string[],
): ToolGate {
  const action = approvalAction(setting, {
    tool: facts.tool,
    ...(facts.outsideWorkspace !== undefined ? { outsideWorkspace: facts.outsideWorkspace } : {}),
  });
  if (action === "run") return { action: "run" };
  if (action === "deny") return { action: "refuse", output: deniedByPolicy(facts.tool), denied: true };
  if (
    facts.tool === "bash" &&
    facts.command !== undefined &&
    allowedBy(allowlist, facts.command) !== undefined
  )
    return { action: "run" };
  return { action: "ask", reason: facts.what };
}

/** The call's arguments as an object (empty when they do not parse). */
export function callArgs(call: StoredToolCall): Record<string, unknown> {
  try {
    const value: unknown = JSON.parse(call.function.arguments || "{}");
    return value !== null && typeof value === "object" && !Array.isArray(value)
      ? (value as Record<string, unknown>)
      : {};
  } catch {
    return {};
  }
}

/** `path` with symlinks resolved as far as it exists (the rest appended), or as given when nothing resolves. */
function realish(path: string): string {
  const rest: string[] = [];
  let at = path;
  for (;;) {
    try {
      return join(realpathSync(at), ...rest.reverse());
    } catch {
      const up = dirname(at);
      if (up === at) return path;
      rest.push(basename(at));
      at = up;
    }
  }
}

function sizeOf(path: string): number | undefined {
  try {
    const s = statSync(path);
    return s.isFile() ? s.size : undefined;
  } catch {
    return undefined;
  }
}

const bytes = (n: number) => `${n} ${n === 1 ? "byte" : "bytes"}`;

/** What the gate needs of `call` in a turn working in `cwd`: reads the file system (sizes, symlinks). */
export function gateFacts(call: StoredToolCall, cwd: string): GateFacts {
  const tool = call.function.name;
  const args = callArgs(call);
  if (tool === "bash") {
    const command = typeof args.command === "string" ? args.command : undefined;
    return {
      tool,
      ...(command !== undefined ? { command } : {}),
      what: `bash wants to run\n${command ?? "(no command given)"}\nin ${cwd}`,
    };
  }
  if (PATH_TOOLS.has(tool) && typeof args.path === "string" && args.path.length > 0) {
    const path = realish(lexicalToolPath(cwd, args.path));
    const outsideWorkspace = !isInside(realish(cwd), path);
    const where = outsideWorkspace ? " (outside the session's workspace)" : "";
    const now = sizeOf(path);
    let what: string;
    if (tool === "write_file") {
      const content = typeof args.content === "string" ? Buffer.byteLength(args.content) : 0;
      const replacing = now === undefined ? "a new file" : `replacing a file of ${bytes(now)}`;
      what = `write_file wants to write ${bytes(content)} to ${path}${where}, ${replacing}`;
    } else if (tool === "edit_file") {
      what = `edit_file wants to edit ${path}${where}${now === undefined ? " (not there now)" : ` (${bytes(now)})`}`;
    } else {
      what = `send_file wants to send ${path}${where}${now === undefined ? " (not there now)" : ` (${bytes(now)})`}`;
    }
    return { tool, outsideWorkspace, what };
  }
  const shown =
    call.function.arguments.length > 500
      ? `${call.function.arguments.slice(0, 500)}…`
      : call.function.arguments;
  return { tool, what: `${tool} wants to run with ${shown || "{}"}` };
}

/** The gate of a turn working in `cwd`: the policy and the allowlist are read at each call (both may change). */
export function approvalGate(deps: {
  setting(): ApprovalsSetting | undefined;
  allowlist(): readonly string[];
  cwd: string;
}): TurnHooks {
  return {
    beforeTool: (call) => {
      const setting = deps.setting();
      // Nothing to read from disk when nothing asks.
      if (setting === undefined || setting === "never") return { action: "run" };
      const facts = gateFacts(call, deps.cwd);
      return decideGate(setting, facts, facts.tool === "bash" ? deps.allowlist() : []);
    },
  };
}
