/**
 * The tools a sub-agent gets (docs/tools.md, Sub-agents): its parent's, minus the ones a child never has
 * (`CHILD_NEVER`: it cannot spawn, check runs or send files), and, when the spawn asked for some, only those.
 * Order follows the parent's. Pure.
 */

/** What a child never gets, whatever the parent has or the spawn asks for. */
export const CHILD_NEVER: readonly string[] = ["spawn_agent", "check_agent_run", "send_file"];

export function childToolNames(parent: readonly string[], requested?: readonly string[]): string[] {
  const wanted = requested ? new Set(requested) : undefined;
  return parent.filter((name) => !CHILD_NEVER.includes(name) && (wanted === undefined || wanted.has(name)));
}
