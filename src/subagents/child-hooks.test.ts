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

  it("refuses, as a denial naming the call, what the approvals gate would ask", () => {
    const [hook] = childHooks([{ beforeTool: () => ({ action: "ask", reason: "run `rm -rf x`" }) }]);
    expect(hook?.beforeTool?.(call)).toEqual({
      action: "refuse",
      output: expect.stringMatching(
        /^Not run: this call needs the owner's approval \(run `rm -rf x`\), and a sub-agent cannot ask/,
      ),
      denied: true,
    });
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
