import { describe, expect, it } from "vitest";
import { ManualClock } from "../core/clock.js";
import type { ToolContext, ToolDefinition, ToolResult } from "../plugin-api/types.js";
import { executeTool } from "./execute-tool.js";
import type { TimeoutSettings } from "./stream-deadlines.js";

const timeouts: TimeoutSettings = {
  prefillSeconds: 1800,
  firstTokenSeconds: 600,
  noProgressSeconds: 1200,
  turnLlmSeconds: 180,
  toolExecutionSeconds: 90,
  sidecarLlmSeconds: 90,
};

/** A tool the test steers: it hands out its context and finishes when told. */
function steeredTool() {
  let context: ToolContext | undefined;
  let finish: ((result: ToolResult) => void) | undefined;
  let markStarted: () => void = () => {};
  const started = new Promise<void>((resolve) => {
    markStarted = resolve;
  });
  const tool: ToolDefinition = {
    name: "stream",
    description: "streams",
    parameters: { type: "object", properties: {} },
    execute: (_args, ctx) => {
      context = ctx;
      markStarted();
      return new Promise<ToolResult>((resolve) => {
        finish = resolve;
      });
    },
  };
  return {
    tool,
    started,
    context: () => context as ToolContext,
    finish: (result: ToolResult) => finish?.(result),
  };
}

function run(tool: ToolDefinition, clock: ManualClock) {
  return executeTool(
    { id: "c1", type: "function", function: { name: tool.name, arguments: "{}" } },
    { tools: [tool], timeouts, clock, signal: new AbortController().signal, cwd: "/tmp", sessionKey: "main" },
  );
}

describe("executeTool: tool progress resets the tool watchdog", () => {
  it("a tool that keeps reporting progress runs past toolExecutionSeconds and finishes", async () => {
    const clock = new ManualClock();
    const steered = steeredTool();
    const outcome = run(steered.tool, clock);
    await steered.started;
    // 4 x 60 s = 240 s, well past the 90 s limit, with progress every 60 s.
    for (let i = 0; i < 4; i++) {
      clock.advance(60_000);
      expect(steered.context().signal.aborted).toBe(false);
      steered.context().progress?.();
    }
    steered.finish({ ok: true, output: "done streaming" });
    expect(await outcome).toEqual({ ok: true, output: "done streaming" });
  });

  it("a tool that goes silent is ended toolExecutionSeconds after its last progress", async () => {
    const clock = new ManualClock();
    const steered = steeredTool();
    const outcome = run(steered.tool, clock);
    await steered.started;
    clock.advance(60_000);
    steered.context().progress?.();
    clock.advance(89_999);
    expect(steered.context().signal.aborted).toBe(false);
    clock.advance(1);
    expect(steered.context().signal.aborted).toBe(true);
    expect(await outcome).toEqual({ ok: false, output: "stream timed out after 90 s.", timedOut: true });
  });

  it("progress after the watchdog fired does not revive the call", async () => {
    const clock = new ManualClock();
    const steered = steeredTool();
    const outcome = run(steered.tool, clock);
    await steered.started;
    clock.advance(90_000);
    steered.context().progress?.();
    steered.finish({ ok: true, output: "too late" });
    expect(await outcome).toMatchObject({ ok: false, timedOut: true });
  });
});
