import type { ClawdisConfig } from "../../core/config-schema.js";

/**
 * The approvals policy (docs/tools.md, Approvals): what one tool call does before it runs. Pure, table-tested.
 *
 * - `"never"` (and no setting at all): every call runs;
 * - `"risky"`: `bash` asks; `write_file` and `edit_file` ask when their path lies outside the session's workspace;
 *   `send_file` asks when the file it sends lies outside it; every other call runs;
 * - `"always"`: every call asks;
 * - a map tool name → `"run"` | `"ask"` | `"deny"`: the tool's entry, else the `"*"` entry, else `"run"`.
 * An `ask` for `bash` whose command the allowlist holds (`bash-allowlist.ts`) runs without asking; the gate
 * (`approval-gate.ts`) applies that.
 */

export type ApprovalsSetting = NonNullable<ClawdisConfig["inbound"]["reply"]["agent"]["approvals"]>;
export type ApprovalAction = "run" | "ask" | "deny";

/** The tools whose path argument `"risky"` checks against the session's workspace. */
export const PATH_TOOLS: ReadonlySet<string> = new Set(["write_file", "edit_file", "send_file"]);

/** What the policy reads of one call. */
export interface CallFacts {
  tool: string;
  /** For a tool in PATH_TOOLS: its path lies outside the session's workspace (undefined: no usable path). */
  outsideWorkspace?: boolean;
}

/** What `setting` (absent: `"never"`) says of the call. Pure. */
export function approvalAction(setting: ApprovalsSetting | undefined, call: CallFacts): ApprovalAction {
  if (setting === undefined || setting === "never") return "run";
  if (setting === "always") return "ask";
  if (setting === "risky") {
    if (call.tool === "bash") return "ask";
    // A path tool whose path could not be read asks: what it would touch is not known.
    if (PATH_TOOLS.has(call.tool)) return call.outsideWorkspace === false ? "run" : "ask";
    return "run";
  }
  return setting[call.tool] ?? setting["*"] ?? "run";
}

/** The line the start log and `clawdis doctor` show once when no policy is set (tools run without asking). */
export function unsetApprovalsWarning(setting: ApprovalsSetting | undefined): string | undefined {
  if (setting !== undefined) return undefined;
  return (
    'tools run without asking: inbound.reply.agent.approvals is not set (as "never"); set it to "risky" to be asked ' +
    "before bash and before file tools reach outside the session's workspace (docs/tools.md)"
  );
}
