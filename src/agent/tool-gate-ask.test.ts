import { describe, expect, it } from "vitest";
import { ManualClock } from "../core/clock.js";
import type { ToolDefinition } from "../plugin-api/types.js";
import type { MessageEntry, StoredChatMessage, StoredToolCall, TranscriptEntry } from "../sessions/types.js";
import { gateCall, resumeGate } from "./batch-step.js";
import type { LlmResult } from "./llm-client.js";
import { runTurn } from "./run-turn.js";
import type { TurnHooks } from "./turn-hooks.js";
import { notRunDenied } from "./turn-parked.js";
import type { TurnInput } from "./turn-types.js";

const call = (id: string, name: string): StoredToolCall => ({
  id,
  type: "function",
  function: { name, arguments: "{}" },
});

const askOnBash: TurnHooks = {
  beforeTool: (c) =>
    c.function.name === "bash" ? { action: "ask", reason: "bash needs approval" } : { action: "run" },
};

function counting(...names: string[]) {
  const runs: string[] = [];
  const tools: ToolDefinition[] = names.map((name) => ({
    name,
    description: name,
    parameters: { type: "object", properties: {} },
    execute: async () => {
      runs.push(name);
      return { ok: true, output: `${name} ok` };
    },
  }));
  return { tools, runs };
}

function turnInput(options: {
  tools: ToolDefinition[];
  responses: LlmResult[];
  hooks?: TurnHooks;
  messages?: StoredChatMessage[];
  resume?: TurnInput["resume"];
}) {
  const appended: { entries: TranscriptEntry[]; final: boolean }[] = [];
  const requests: StoredChatMessage[][] = [];
  const responses = [...options.responses];
  const input: TurnInput = {
    turnId: "t1",
    sessionKey: "main",
    model: "m",
    messages: options.messages ?? [{ role: "user", content: "hello" }],
    tools: options.tools,
    llm: {
      stream: async (request) => {
        requests.push([...request.messages]);
        return (
          responses.shift() ?? { ok: false, reason: "error", error: "no response left", partialText: "" }
        );
      },
    },
    append: async (entries, o) => {
      appended.push({ entries, final: o?.final === true });
    },
    emit: () => {},
    takeJoined: async () => [],
    signal: new AbortController().signal,
    clock: new ManualClock(0),
    timeouts: {
      prefillSeconds: 60,
      firstTokenSeconds: 60,
      noProgressSeconds: 60,
      turnLlmSeconds: 60,
      toolExecutionSeconds: 60,
      sidecarLlmSeconds: 60,
    },
    maxOutputTokens: 100,
    cwd: "/",
    meta: { journalId: "j-1" },
    ...(options.hooks ? { hooks: options.hooks } : {}),
    ...(options.resume ? { resume: options.resume } : {}),
  };
  const entries = () => appended.flatMap((a) => a.entries);
  const results = () =>
    entries()
      .filter((e): e is MessageEntry => e.type === "message" && (e as MessageEntry).message.role === "tool")
      .map((e) => [e.message.tool_call_id, e.message.content]);
  return { input, appended, requests, entries, results };
}

const toolsAnswer = (calls: StoredToolCall[]): LlmResult => ({
  ok: true,
  text: "",
  toolCalls: calls,
  finishReason: "tool_calls",
  model: "m",
});
const final = (text: string): LlmResult => ({
  ok: true,
  text,
  toolCalls: [],
  finishReason: "stop",
  model: "m",
});

describe("a tool gate that asks", () => {
  it("gateCall: an ask parks (no gate to run); the hooks after it are not asked", () => {
    const seen: string[] = [];
    const later: TurnHooks = {
      beforeTool: () => {
        seen.push("later");
        return { action: "run" };
      },
    };
    const hooks: TurnHooks[] = [askOnBash, later];
    expect(gateCall(hooks, call("a", "bash"), undefined)).toEqual({ asked: "bash needs approval" });
    expect(seen).toEqual([]);
    expect(gateCall(hooks, call("b", "read_file"), undefined)).toEqual({ gate: { action: "run" } });
  });

  it.each([
    ["approved: runs without asking", { run: true } as const, { gate: { action: "run" } }],
    [
      "refused: not run, with the reason",
      { run: false, reason: "not now" } as const,
      { gate: { action: "refuse", output: notRunDenied("not now"), denied: true } },
    ],
    ["no decision: gated again (asks)", undefined, { asked: "bash needs approval" }],
  ])("resumeGate %s", (_what, decision, expected) => {
    expect(resumeGate([askOnBash], decision, call("a", "bash"), undefined)).toEqual(expected);
  });

  it("the calls before the asked one run; it and the ones after do not; the turn ends parked, no reply", async () => {
    const { tools, runs } = counting("read_file", "bash", "write_file");
    const calls = [call("c1", "read_file"), call("c2", "bash"), call("c3", "write_file")];
    const turn = turnInput({ tools, responses: [toolsAnswer(calls), final("never")], hooks: askOnBash });
    const result = await runTurn(turn.input);
    expect(runs).toEqual(["read_file"]);
    expect(result.parked).toEqual({
      callId: "c2",
      name: "bash",
      arguments: "{}",
      reason: "bash needs approval",
    });
    expect(result.text).toBe("");
    expect(turn.requests).toHaveLength(1);
    expect(turn.results()).toEqual([["c1", "read_file ok"]]);
    const parked = turn.appended.find((a) => a.entries.some((e) => e.type === "tool-parked"));
    expect(parked?.final).toBe(true);
    expect(parked?.entries[0]).toMatchObject({
      type: "tool-parked",
      callIds: ["c2", "c3"],
      reason: "bash needs approval",
      journalId: "j-1",
    });
  });

  it("a resumed batch runs the approved call once, tells the model of a refused one, then goes on", async () => {
    const { tools, runs } = counting("bash", "write_file");
    const calls = [call("c2", "bash"), call("c3", "write_file")];
    const turn = turnInput({
      tools,
      responses: [final("done")],
      hooks: askOnBash,
      messages: [
        { role: "user", content: "hello" },
        { role: "assistant", content: null, tool_calls: calls },
      ],
      resume: { calls, decisions: { c2: { run: true }, c3: { run: false, reason: "no writes" } } },
    });
    const result = await runTurn(turn.input);
    expect(result.text).toBe("done");
    expect(runs).toEqual(["bash"]);
    expect(turn.results()).toEqual([
      ["c2", "bash ok"],
      ["c3", notRunDenied("no writes")],
    ]);
    const sent = turn.requests[0] ?? [];
    expect(sent.slice(-2).map((m) => [m.tool_call_id, m.content])).toEqual(turn.results());
  });

  it("denied calls count as failures for the loop guard: its nudges come", async () => {
    const { tools, runs } = counting("bash");
    const denyAll: TurnHooks = {
      beforeTool: () => ({ action: "refuse", output: "Not run: denied.", denied: true }),
    };
    // Different commands each round: no identical calls for the guard to refuse.
    const rounds = [1, 2, 3, 4].map((i) =>
      toolsAnswer([
        { ...call(`c${i}`, "bash"), function: { name: "bash", arguments: `{"command":"try ${i}"}` } },
      ]),
    );
    const turn = turnInput({ tools, responses: [...rounds, final("ok")], hooks: denyAll });
    await runTurn(turn.input);
    expect(runs).toEqual([]);
    const contents = turn.results().map(([, content]) => String(content));
    // Failed calls with the same cause weigh more: the third crosses the first nudge, the fourth the stronger one.
    expect(contents.slice(0, 2)).toEqual(["Not run: denied.", "Not run: denied."]);
    expect(contents[2]).toContain("[Note from the gateway: several tool calls failed");
    expect(contents[3]).toContain("[Note from the gateway: the tool calls keep failing");
  });
});
