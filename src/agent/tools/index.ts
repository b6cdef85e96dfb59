import type { ToolDefinition } from "../../plugin-api/types.js";
import { bashTool } from "./bash.js";
import { editFileTool } from "./edit-file.js";
import { readFileTool } from "./read-file.js";
import { sendFileTool } from "./send-file.js";
import { writeFileTool } from "./write-file.js";

export { bashTool } from "./bash.js";
export { editFileTool } from "./edit-file.js";
export { readFileTool } from "./read-file.js";
export { sendFileTool } from "./send-file.js";
export { writeFileTool } from "./write-file.js";

/** The tools every gateway has: bash, read_file, write_file, edit_file, send_file (fresh instances each call). */
export function builtinTools(): ToolDefinition[] {
  return [bashTool(), readFileTool(), writeFileTool(), editFileTool(), sendFileTool()];
}

/**
 * The tools a turn may use, from a grant (src/runtime/tools-policy.ts): `"*"` means all but the names in
 * `starSkips` (which are taken only when listed by name), else the listed names (names that match no tool are
 * ignored). Order follows `all`; when two tools share a name, the first one wins, so a name is offered to the
 * model only once.
 */
export function selectTools(
  all: ToolDefinition[],
  allowed: readonly string[],
  starSkips: readonly string[] = [],
): ToolDefinition[] {
  const everything = allowed.includes("*");
  const wanted = new Set(allowed);
  const seen = new Set<string>();
  const selected: ToolDefinition[] = [];
  for (const tool of all) {
    if (seen.has(tool.name)) continue;
    seen.add(tool.name);
    if (wanted.has(tool.name) || (everything && !starSkips.includes(tool.name))) selected.push(tool);
  }
  return selected;
}
