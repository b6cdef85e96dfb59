import { requireString, ToolArgError } from "../agent/tools/tool-args.js";
import type { ToolDefinition, ToolResult } from "../plugin-api/types.js";

/**
 * `spawn_agent` and `check_agent_run` (docs/tools.md, Sub-agents) of one turn: they parse their arguments and hand
 * them on; `spawn` starts a run and `check` reads or cancels one (a string they return is the result the model
 * reads; `ok: false` for an error).
 */
export interface SpawnPort {
  spawn(brief: string, tools: string[] | undefined): Promise<ToolResult>;
  check(id: string, cancel: boolean): Promise<ToolResult>;
}

export function spawnTools(port: SpawnPort): ToolDefinition[] {
  return [
    {
      name: "spawn_agent",
      description:
        "Start a sub-agent on one task in the background: it works alone from the brief (it cannot talk to the person) " +
        "with your tools (or the subset named in tools), and its result comes back to you later as a new message. " +
        "Returns its run id at once.",
      parameters: {
        type: "object",
        properties: {
          brief: { type: "string", description: "Everything the sub-agent needs to know to do the task." },
          tools: {
            type: "array",
            items: { type: "string" },
            description: "Tool names it may use (default: all of yours it may have).",
          },
        },
        required: ["brief"],
        additionalProperties: false,
      },
      async execute(args) {
        let brief: string;
        try {
          brief = requireString(args, "brief");
        } catch (error) {
          if (error instanceof ToolArgError) return { ok: false, output: `spawn_agent: ${error.message}` };
          throw error;
        }
        const tools = args.tools;
        if (tools !== undefined && !(Array.isArray(tools) && tools.every((t) => typeof t === "string"))) {
          return { ok: false, output: "spawn_agent: tools must be a list of tool names" };
        }
        return port.spawn(brief, tools as string[] | undefined);
      },
    },
    {
      name: "check_agent_run",
      description:
        "Read the status of a sub-agent run (running, done, failed, cancelled, owner_restarted) and its result when it " +
        "has ended; cancel: true ends a running one.",
      parameters: {
        type: "object",
        properties: {
          id: { type: "string", description: "The run id spawn_agent returned." },
          cancel: { type: "boolean", description: "End the run now." },
        },
        required: ["id"],
        additionalProperties: false,
      },
      async execute(args) {
        let id: string;
        try {
          id = requireString(args, "id");
        } catch (error) {
          if (error instanceof ToolArgError)
            return { ok: false, output: `check_agent_run: ${error.message}` };
          throw error;
        }
        return port.check(id, args.cancel === true);
      },
    },
  ];
}
