import { describe, expect, it } from "vitest";
import { mapFinishReason, ReplyAssembler } from "./llm-assemble.js";

describe("ReplyAssembler", () => {
  it("joins content and tool-call fragments by index, in index order", () => {
    const a = new ReplyAssembler();
    a.push({ model: "m1", choices: [{ delta: { content: "Hi" } }] });
    a.push({
      choices: [
        { delta: { tool_calls: [{ index: 1, id: "c1", function: { name: "bash", arguments: "" } }] } },
      ],
    });
    a.push({
      choices: [{ delta: { tool_calls: [{ index: 0, id: "c0", function: { name: "read_file" } }] } }],
    });
    a.push({ choices: [{ delta: { tool_calls: [{ index: 1, function: { arguments: '{"comm' } }] } }] });
    a.push({ choices: [{ delta: { tool_calls: [{ index: 1, function: { arguments: 'and":"ls"}' } }] } }] });
    a.push({ choices: [{ delta: {}, finish_reason: "tool_calls" }] });
    a.push({ choices: [], usage: { prompt_tokens: 3, completion_tokens: 2, total_tokens: 5 } });
    expect(a.text).toBe("Hi");
    expect(a.model).toBe("m1");
    expect(a.finishReason).toBe("tool_calls");
    expect(a.usage).toEqual({ promptTokens: 3, completionTokens: 2, totalTokens: 5 });
    expect(a.toolCalls()).toEqual([
      { id: "c0", type: "function", function: { name: "read_file", arguments: "{}" } },
      { id: "c1", type: "function", function: { name: "bash", arguments: '{"command":"ls"}' } },
    ]);
  });

  it("does not double a name a server repeats, and mints missing ids", () => {
    const a = new ReplyAssembler();
    a.push({
      choices: [{ delta: { tool_calls: [{ index: 0, function: { name: "bash", arguments: "{}" } }] } }],
    });
    a.push({ choices: [{ delta: { tool_calls: [{ index: 0, function: { name: "bash" } }] } }] });
    const [call] = a.toolCalls();
    expect(call?.function.name).toBe("bash");
    expect(call?.id).toMatch(/^call_[0-9a-f]{24}$/);
  });

  it("counts reasoning as output but not as text", () => {
    const a = new ReplyAssembler();
    expect(a.push({ choices: [{ delta: { role: "assistant", content: "" } as never }] })).toEqual({
      text: "",
      produced: false,
      kind: "keepalive",
    });
    expect(a.push({ choices: [{ delta: { reasoning_content: "hmm" } }] })).toEqual({
      text: "",
      produced: true,
      kind: "reasoning",
      reasoning: "hmm",
    });
    expect(a.push({ choices: [{ delta: { content: "ok" } }] })).toEqual({
      text: "ok",
      produced: true,
      kind: "output",
    });
    expect(a.push({ choices: [], usage: { prompt_tokens: 3 } })).toMatchObject({ kind: "keepalive" });
    expect(
      a.push({ choices: [{ delta: { tool_calls: [{ index: 0, id: "c", function: { name: "x" } }] } }] }),
    ).toMatchObject({ kind: "output" });
    expect(a.rawFinishReason).toBeUndefined();
  });

  it("maps finish reasons", () => {
    expect(mapFinishReason("length")).toBe("length");
    expect(mapFinishReason("function_call")).toBe("tool_calls");
    expect(mapFinishReason("eos")).toBe("unknown");
    expect(mapFinishReason(undefined)).toBe("unknown");
  });
});
