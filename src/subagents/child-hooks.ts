import type { ToolGate, TurnHooks } from "../agent/turn-hooks.js";

/** What a child's call gets when the approvals policy would ask: it is refused, as a denial. */
export function notAskable(reason: string): string {
  return `Not run: this call needs the owner's approval (${reason}), and a sub-agent cannot ask for it. Say in your result what you would have run.`;
}

/**
 * The parent's turn hooks for a child's turn (docs/tools.md, Sub-agents): the same, except that a call the
 * approvals gate would ask about is refused as a denial (the loop guard counts it), since a child never talks to
 * the person and never parks. Each hook's methods are called on the hook itself.
 */
export function childHooks(hooks: readonly TurnHooks[]): TurnHooks[] {
  return hooks.map((hook) => {
    const child: TurnHooks = {};
    if (hook.prepareCall)
      child.prepareCall = (step) => hook.prepareCall?.(step) ?? Promise.resolve(undefined);
    if (hook.onToolRequest) child.onToolRequest = () => hook.onToolRequest?.();
    if (hook.beforeTool) {
      child.beforeTool = (call): ToolGate => {
        const gate = hook.beforeTool?.(call) ?? { action: "run" };
        return gate.action === "ask"
          ? { action: "refuse", output: notAskable(gate.reason), denied: true }
          : gate;
      };
    }
    if (hook.afterTool) child.afterTool = (item) => hook.afterTool?.(item);
    if (hook.afterBatch) child.afterBatch = (batch) => hook.afterBatch?.(batch);
    return child;
  });
}
