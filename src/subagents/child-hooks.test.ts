import { describe, expect, it } from "vitest";
import type { ToolGate, TurnHooks } from "../agent/turn-hooks.js";
import type { StoredToolCall } from "../sessions/types.js";
import { childHooks } from "./child-hooks.js";

const call: StoredToolCall = { id: "c1", type: "function", function: { name: "bash", arguments: "{}" } };

describe("childHooks", () => {
  it.each([
    [{ action: "run" }, { action: "run" }],
    [
      { action: "refuse", output: "no", denied: true },
      { action: "refuse", output: "no", denied: true },
    ],
    [
      { action: "stop", why: "x" },
      { action: "stop", why: "x" },
    ],
  ] as [ToolGate, ToolGate][])("passes %o on", (gate, expected) => {
    const [hook] = childHooks([{ beforeTool: () => gate }]);
    expect(hook?.beforeTool?.(call)).toEqual(expected);
  });

  it("passes an ask on: the child's batch parks and asks in the parent's chat", () => {
    const [hook] = childHooks([{ beforeTool: () => ({ action: "ask", reason: "run `rm -rf x`" }) }]);
    expect(hook?.beforeTool?.(call)).toEqual({ action: "ask", reason: "run `rm -rf x`" });
  });

  it("calls each hook's methods on the hook itself", () => {
    class Counting implements TurnHooks {
      seen = 0;
      afterTool(): void {
        this.seen++;
      }
    }
    const counting = new Counting();
    const [hook] = childHooks([counting]);
    hook?.afterTool?.({ call, outcome: { ok: true, output: "" } });
    expect(counting.seen).toBe(1);
  });
});
