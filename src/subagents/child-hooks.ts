import type { TurnHooks } from "../agent/turn-hooks.js";

/**
 * The parent's turn hooks for a child's turn (docs/tools.md, Sub-agents): the same ones, the approvals gate among
 * them (a call it asks about parks the child's batch; the prompt goes to the parent's chat). Each hook's methods
 * are called on the hook itself.
 */
export function childHooks(hooks: readonly TurnHooks[]): TurnHooks[] {
  return hooks.map((hook) => {
    const child: TurnHooks = {};
    if (hook.prepareCall)
      child.prepareCall = (step) => hook.prepareCall?.(step) ?? Promise.resolve(undefined);
    if (hook.onToolRequest) child.onToolRequest = () => hook.onToolRequest?.();
    if (hook.beforeTool) child.beforeTool = (call) => hook.beforeTool?.(call) ?? { action: "run" };
    if (hook.afterTool) child.afterTool = (item) => hook.afterTool?.(item);
    if (hook.afterBatch) child.afterBatch = (batch) => hook.afterBatch?.(batch);
    return child;
  });
}
