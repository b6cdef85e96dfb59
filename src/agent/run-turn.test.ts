import { describe, expect, it } from "vitest";
import { ManualClock } from "../core/clock.js";
import type { GatewayEvent, ToolDefinition } from "../plugin-api/types.js";
import type { MessageEntry, StoredChatMessage, StoredToolCall, TranscriptEntry } from "../sessions/types.js";
import { batchStep, gateCall, NOT_RUN, NOT_RUN_DRAINED, type RanBatch } from "./batch-step.js";
import { callStep, type ToolRequest } from "./call-step.js";
import { closeBatch, joinMessages } from "./close-batch.js";
import { estimateTokens, noteChars } from "./estimate-tokens.js";
import type { LlmResult, LlmStreamRequest } from "./llm-client.js";
import { newLoopGuard } from "./loop-guard.js";
import { prepareCall } from "./prepare-call.js";
import { QUIET_STOP_TEXT, runTurn } from "./run-turn.js";
import type { TurnHooks } from "./turn-hooks.js";
import { contextEstimate, startTurn, type TurnState } from "./turn-state.js";
import type { TurnInput } from "./turn-types.js";

const call = (id: string, name: string, args = "{}"): StoredToolCall => ({
  id,
  type: "function",
  function: { name, arguments: args },
});

type Answer = Extract<LlmResult, { ok: true }>;

const answer = (text: string, usage?: { promptTokens: number; completionTokens: number }): Answer => ({
  ok: true,
  text,
  toolCalls: [],
  finishReason: "stop",
  model: "m-served",
  ...(usage ? { usage: { ...usage, totalTokens: usage.promptTokens + usage.completionTokens } } : {}),
});

const asks = (calls: StoredToolCall[], text = ""): Answer => ({
  ...answer(text, { promptTokens: 100, completionTokens: 10 }),
  toolCalls: calls,
  finishReason: "tool_calls",
});

/** The message of a `message` entry. */
const messageOf = (entry: TranscriptEntry) =>
  entry.type === "message" ? (entry as MessageEntry).message : undefined;

/** Records `what` in `log` and gives `value` (a hook that says what it saw). */
function noted<T>(log: string[], what: string, value: T): T {
  log.push(what);
  return value;
}

/** A tool that counts its runs and answers `${name} ok`; `during` runs inside each call (e.g. a stop). */
function countingTool(name: string, during?: () => void) {
  const runs: Record<string, unknown>[] = [];
  const tool: ToolDefinition = {
    name,
    description: name,
    parameters: { type: "object", properties: {} },
    execute: async (args) => {
      runs.push(args);
      during?.();
      return { ok: true, output: `${name} ok` };
    },
  };
  return { tool, runs };
}

/** A turn's input whose every effect is recorded: appends (with `final`), events, model requests. */
function fakeTurn(options: {
  tools?: ToolDefinition[];
  responses?: LlmResult[];
  hooks?: TurnHooks;
  messages?: StoredChatMessage[];
  previousContextTokens?: number;
  joined?: StoredChatMessage[][];
}) {
  const appended: { entries: TranscriptEntry[]; final: boolean }[] = [];
  const events: GatewayEvent[] = [];
  const requests: StoredChatMessage[][] = [];
  const stop = new AbortController();
  const drain = new AbortController();
  const responses = [...(options.responses ?? [])];
  const joined = [...(options.joined ?? [])];
  const input: TurnInput = {
    turnId: "t1",
    sessionKey: "main",
    model: "m",
    messages: options.messages ?? [{ role: "user", content: "hello" }],
    tools: options.tools ?? [],
    llm: {
      stream: async (request: LlmStreamRequest) => {
        requests.push([...request.messages]);
        return (
          responses.shift() ?? { ok: false, reason: "error", error: "no response left", partialText: "" }
        );
      },
    },
    append: async (entries, appendOptions) => {
      appended.push({ entries, final: appendOptions?.final === true });
    },
    emit: (event) => events.push(event),
    takeJoined: async () => joined.shift() ?? [],
    signal: stop.signal,
    drain: drain.signal,
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
    ...(options.hooks ? { hooks: options.hooks } : {}),
    ...(options.previousContextTokens !== undefined
      ? { previousContextTokens: options.previousContextTokens }
      : {}),
  };
  /** The messages of every entry appended, in order. */
  const messages = () => appended.flatMap((a) => a.entries).flatMap((e) => messageOf(e) ?? []);
  return { input, appended, events, requests, stop, drain, messages };
}

/** A state in round 1 whose response asked for `calls`. */
function inBatch(turn: ReturnType<typeof fakeTurn>, calls: StoredToolCall[], text = "") {
  const state = startTurn(turn.input);
  state.round = 1;
  const request: ToolRequest = { text, toolCalls: calls, meta: { model: "m-served" } };
  return { state, request };
}

async function ran(state: TurnState, request: ToolRequest): Promise<RanBatch> {
  const outcome = await batchStep(state, request);
  if (outcome.kind !== "ran") throw new Error(`the batch ended the turn: ${JSON.stringify(outcome.result)}`);
  return outcome.batch;
}

describe("gateCall", () => {
  const refuseAll: TurnHooks = { beforeTool: () => ({ action: "refuse", output: "no" }) };
  it("asks the hooks in order and takes the first answer that is not run; later hooks are not asked", () => {
    const asked: string[] = [];
    const hooks: TurnHooks[] = [
      { beforeTool: () => noted(asked, "first", { action: "run" }) },
      {},
      { beforeTool: () => noted(asked, "third", { action: "refuse", output: "no" }) },
      { beforeTool: () => noted(asked, "fourth", { action: "stop", why: "never asked" }) },
    ];
    expect(gateCall(hooks, call("a", "x"), undefined)).toEqual({ gate: { action: "refuse", output: "no" } });
    expect(asked).toEqual(["first", "third"]);
  });

  it("a stop refuses its own call with NOT_RUN and stops the batch; a stopped batch asks no hook", () => {
    expect(
      gateCall([{ beforeTool: () => ({ action: "stop", why: "loops" }) }], call("a", "x"), undefined),
    ).toEqual({
      gate: { action: "refuse", output: NOT_RUN },
      stopped: "loops",
    });
    let asked = 0;
    const counting: TurnHooks = {
      beforeTool: () => {
        asked++;
        return { action: "run" };
      },
    };
    expect(gateCall([counting, refuseAll], call("b", "x"), "loops")).toEqual({
      gate: { action: "refuse", output: NOT_RUN },
      stopped: "loops",
    });
    expect(asked).toBe(0);
  });

  it("no hook with an opinion: the call runs", () => {
    expect(gateCall([{}, { beforeTool: () => ({ action: "run" }) }], call("a", "x"), undefined)).toEqual({
      gate: { action: "run" },
    });
  });
});

describe("batchStep", () => {
  it("a refused call does not run and gets the gate's output; afterTool sees only calls that ran", async () => {
    const a = countingTool("a");
    const b = countingTool("b");
    const afterTool: string[] = [];
    const turn = fakeTurn({
      tools: [a.tool, b.tool],
      hooks: {
        beforeTool: (c) =>
          c.function.name === "b" ? { action: "refuse", output: "b is not allowed" } : { action: "run" },
        afterTool: (item) => afterTool.push(item.call.id),
      },
    });
    const { state, request } = inBatch(turn, [call("1", "a"), call("2", "b"), call("3", "a")]);
    const batch = await ran(state, request);
    expect(a.runs).toHaveLength(2);
    expect(b.runs).toHaveLength(0);
    expect(afterTool).toEqual(["1", "3"]);
    expect(batch.items.map((i) => [i.call.id, i.outcome, i.refused ?? false])).toEqual([
      ["1", { ok: true, output: "a ok" }, false],
      ["2", { ok: false, output: "b is not allowed" }, true],
      ["3", { ok: true, output: "a ok" }, false],
    ]);
    expect(batch.stopped).toBeUndefined();
    // Each result but the last is written as it comes; the last waits for the batch's close.
    expect(batch.written).toBe(2);
    expect(turn.messages()).toEqual([
      { role: "assistant", content: null, tool_calls: request.toolCalls },
      { role: "tool", tool_call_id: "1", content: "a ok" },
      { role: "tool", tool_call_id: "2", content: "b is not allowed" },
    ]);
    const refusedEntry = turn.appended[2]?.entries[0] as MessageEntry | undefined;
    expect(refusedEntry?.meta).toEqual({
      tool: "b",
      ok: false,
      refused: true,
    });
    expect(turn.events.map((e) => `${e.type}:${"callId" in e ? e.callId : ""}`)).toEqual([
      "tool-call:1",
      "tool-result:1",
      "tool-call:2",
      "tool-result:2",
      "tool-call:3",
      "tool-result:3",
    ]);
    // The assistant message joined the context (the results join it at the close).
    expect(state.messages.at(-1)).toEqual({
      role: "assistant",
      content: null,
      tool_calls: request.toolCalls,
    });
  });

  it("a stop gate refuses its call and every later one with NOT_RUN; earlier calls ran", async () => {
    const a = countingTool("a");
    let asked = 0;
    const turn = fakeTurn({
      tools: [a.tool],
      hooks: {
        beforeTool: (c) => {
          asked++;
          return c.id === "2" ? { action: "stop", why: "going in circles" } : { action: "run" };
        },
      },
    });
    const { state, request } = inBatch(turn, [call("1", "a"), call("2", "a"), call("3", "a")]);
    const batch = await ran(state, request);
    expect(a.runs).toHaveLength(1);
    expect(asked).toBe(2);
    expect(batch.stopped).toBe("going in circles");
    expect(batch.results.map((r) => r.content)).toEqual(["a ok", NOT_RUN, NOT_RUN]);
    expect(batch.items.map((i) => i.refused ?? false)).toEqual([false, true, true]);
  });

  it("calls without an id get one, used in the message, the events and the results", async () => {
    const a = countingTool("a");
    const turn = fakeTurn({ tools: [a.tool] });
    const { state, request } = inBatch(turn, [call("", "a")]);
    const batch = await ran(state, request);
    const id = batch.items[0]?.call.id ?? "";
    expect(id).toMatch(/^call_[0-9a-f-]{36}$/);
    expect(batch.results[0]?.tool_call_id).toBe(id);
    expect(turn.events.every((e) => "callId" in e && e.callId === id)).toBe(true);
  });

  it("a drain that began before the batch: no call runs, each gets NOT_RUN_DRAINED, the turn ends drained", async () => {
    const a = countingTool("a");
    const turn = fakeTurn({ tools: [a.tool] });
    const { state, request } = inBatch(turn, [call("1", "a"), call("2", "a")], "let me look");
    turn.drain.abort();
    const outcome = await batchStep(state, request);
    expect(a.runs).toHaveLength(0);
    expect(turn.events).toEqual([]);
    expect(outcome).toMatchObject({
      kind: "end",
      result: { stopReason: "aborted", drained: true, rounds: 1 },
    });
    expect(turn.messages()).toEqual([
      { role: "assistant", content: "let me look", tool_calls: request.toolCalls },
      { role: "tool", tool_call_id: "1", content: NOT_RUN_DRAINED },
      { role: "tool", tool_call_id: "2", content: NOT_RUN_DRAINED },
    ]);
  });

  it("a stop during a call ends the batch after that call; its result is not yet written", async () => {
    const turn = fakeTurn({});
    const a = countingTool("a", () => turn.stop.abort());
    turn.input.tools = [a.tool];
    const { state, request } = inBatch(turn, [call("1", "a"), call("2", "a")]);
    const batch = await ran(state, request);
    expect(a.runs).toHaveLength(1);
    expect(batch.items).toHaveLength(1);
    expect(batch.written).toBe(0);
  });
});

describe("closeBatch", () => {
  it("after a drain: the nudge goes on the last result, every result and the hooks' entries are written, drained", async () => {
    const turn = fakeTurn({});
    const a = countingTool("a", () => turn.drain.abort());
    turn.input.tools = [a.tool];
    const saved: TranscriptEntry = { type: "hook-state", id: "h1", ts: "x" };
    turn.input.hooks = { afterBatch: (items) => ({ nudge: `seen ${items.length}`, entries: [saved] }) };
    const { state, request } = inBatch(turn, [call("1", "a"), call("2", "a", '{"n":2}')]);
    const batch = await ran(state, request);
    // Drained during the first call: the batch runs to its end.
    expect(a.runs).toHaveLength(2);
    const before = turn.appended.length;
    const result = await closeBatch(state, batch);
    expect(result).toMatchObject({ stopReason: "aborted", drained: true, error: "stopped", rounds: 1 });
    const closing = turn.appended.slice(before);
    expect(closing).toHaveLength(1);
    const entries = closing[0]?.entries ?? [];
    expect(entries.map((e) => messageOf(e)?.content ?? e.type)).toEqual([
      // The loop guard's own afterBatch (first) has no nudge here; the extra hook's comes after it.
      "a ok\n\nseen 2",
      "loop-guard",
      "hook-state",
    ]);
    expect(state.messages.slice(-2)).toEqual([
      { role: "tool", tool_call_id: "1", content: "a ok" },
      { role: "tool", tool_call_id: "2", content: "a ok\n\nseen 2" },
    ]);
  });

  it("a stopped batch ends quietly with the response's text, written as the final message", async () => {
    const a = countingTool("a");
    const turn = fakeTurn({
      tools: [a.tool],
      hooks: { beforeTool: () => ({ action: "stop", why: "circles" }) },
    });
    const { state, request } = inBatch(turn, [call("1", "a")], "trying again");
    const result = await closeBatch(state, await ran(state, request));
    expect(result).toMatchObject({ stopReason: "tool-loop", quiet: true, text: "trying again", rounds: 1 });
    const last = turn.appended.at(-1);
    expect(last?.final).toBe(true);
    expect(last?.entries[0]).toMatchObject({
      message: { role: "assistant", content: "trying again" },
      meta: { final: true, loopGuard: "circles" },
    });
  });

  it("a quiet stop without text says the turn's last text, else QUIET_STOP_TEXT", async () => {
    const turn = fakeTurn({ hooks: { beforeTool: () => ({ action: "stop", why: "circles" }) } });
    const { state, request } = inBatch(turn, [call("1", "a")]);
    expect(await closeBatch(state, await ran(state, request))).toMatchObject({ text: QUIET_STOP_TEXT });
    state.lastText = "earlier words";
    expect(await closeBatch(state, await ran(state, request))).toMatchObject({ text: "earlier words" });
  });

  it("a stop (the signal) wins over a stopped batch and a drain", async () => {
    const turn = fakeTurn({ hooks: { beforeTool: () => ({ action: "stop", why: "circles" }) } });
    const { state, request } = inBatch(turn, [call("1", "a")]);
    const batch = await ran(state, request);
    turn.drain.abort();
    turn.stop.abort();
    const result = await closeBatch(state, batch);
    expect(result).toMatchObject({ stopReason: "aborted", error: "stopped", rounds: 1 });
    expect(result?.drained).toBeUndefined();
    expect(result?.quiet).toBeUndefined();
  });

  it("a batch that was not stopped or drained leaves the turn going", async () => {
    const a = countingTool("a");
    const turn = fakeTurn({ tools: [a.tool] });
    const { state, request } = inBatch(turn, [call("1", "a")]);
    expect(await closeBatch(state, await ran(state, request))).toBeUndefined();
  });
});

describe("prepareCall and callStep", () => {
  it("a stop or a drain before the call ends the turn with the rounds done", async () => {
    const turn = fakeTurn({});
    const state = startTurn(turn.input);
    state.round = 3;
    turn.drain.abort();
    expect(await prepareCall(state)).toMatchObject({ stopReason: "aborted", drained: true, rounds: 2 });
    turn.stop.abort();
    const stopped = await prepareCall(state);
    expect(stopped).toMatchObject({ stopReason: "aborted", error: "stopped", rounds: 2 });
    expect(stopped?.drained).toBeUndefined();
  });

  it("hooks see the call's input tokens and may replace the context; a drain they let in ends the turn", async () => {
    const seen: { inputTokens: number; round: number; count: number }[] = [];
    const turn = fakeTurn({ previousContextTokens: 500 });
    turn.input.hooks = {
      prepareCall: async ({ messages, inputTokens, round }) => {
        seen.push({ inputTokens, round, count: messages.length });
        if (round === 2) turn.drain.abort();
        return round === 1 ? [{ role: "user", content: "compacted" }] : undefined;
      },
    };
    const state = startTurn(turn.input);
    state.round = 1;
    expect(await prepareCall(state)).toBeUndefined();
    expect(state.messages).toEqual([{ role: "user", content: "compacted" }]);
    // Round 2: the last call's prompt (300) plus an estimate of what came since, or the whole estimate if more.
    state.round = 2;
    state.callTokensBase = 300;
    state.messagesAtCall = 1;
    state.messages.push({ role: "tool", tool_call_id: "1", content: "x".repeat(400) });
    expect(await prepareCall(state)).toMatchObject({ drained: true, rounds: 1 });
    expect(seen).toEqual([
      { inputTokens: 500, round: 1, count: 1 },
      { inputTokens: 300 + 102, round: 2, count: 2 },
    ]);
  });

  it("the context's estimate counts only what came since the last count, and afresh after a compaction", async () => {
    const last: StoredChatMessage = { role: "assistant", content: "kept" };
    const said: StoredChatMessage[] = [
      { role: "user", content: "x".repeat(400) },
      { role: "user", content: "a" },
      last,
    ];
    const turn = fakeTurn({ messages: said });
    // Replaced in place: the same length and the same last message, but not what was counted before.
    turn.input.hooks = {
      prepareCall: async () => [
        { role: "user", content: "y".repeat(4000) },
        { role: "user", content: "b" },
        last,
      ],
    };
    const state = startTurn(turn.input);
    expect(state.contextTokens).toBe(estimateTokens(said));
    expect(state.counted?.count).toBe(3);
    // A context its builder counted is not walked again: the turn starts from the builder's count.
    const built: StoredChatMessage[] = [{ role: "user", content: "q" }];
    noteChars(built, 4000);
    expect(startTurn({ ...turn.input, messages: built }).contextTokens).toBe(1000);
    state.round = 2;
    expect(await prepareCall(state)).toBeUndefined();
    expect(contextEstimate(state)).toBe(estimateTokens(state.messages));
    expect(contextEstimate(state)).toBeGreaterThan(1000);
    // Messages added since are counted on top; a last message no longer in its place is a count afresh.
    state.messages.push({ role: "tool", tool_call_id: "1", content: "z".repeat(40) });
    expect(contextEstimate(state)).toBe(estimateTokens(state.messages));
    state.messages[3] = { role: "tool", tool_call_id: "1", content: "z".repeat(4000) };
    expect(contextEstimate(state)).toBe(estimateTokens(state.messages));
  });

  it("a compaction by the built-in hook counts into the state: compactions, the context as an estimate", async () => {
    const said: StoredChatMessage[] = [{ role: "system", content: "be brief" }];
    for (let i = 0; i < 6; i++) {
      said.push({ role: "user", content: `question ${i} ${"x".repeat(400)}` });
      said.push({ role: "assistant", content: `answer ${i}` });
    }
    const turn = fakeTurn({ messages: said, previousContextTokens: 900, responses: [answer("the notes")] });
    turn.input.compaction = {
      budget: { window: 1000, threshold: 0.5, keepRecentToolResults: 3, keepRecentMessages: 2 },
      notesModels: ["notes-model"],
      sidecarSeconds: 60,
    };
    const state = startTurn(turn.input);
    state.round = 1;
    expect(state.contextEstimated).toBe(false);
    expect(await prepareCall(state)).toBeUndefined();
    expect(turn.requests).toHaveLength(1);
    expect(state.compactions).toBe(1);
    expect(state.messages.length).toBeLessThan(said.length);
    expect(state.contextTokens).toBe(estimateTokens(state.messages));
    expect(state.contextEstimated).toBe(true);
  });

  it("sums usage over calls; a call without usage makes the context an estimate", async () => {
    const turn = fakeTurn({
      responses: [
        answer("one", { promptTokens: 100, completionTokens: 5 }),
        answer("two", { promptTokens: 120, completionTokens: 7 }),
        answer("three"),
      ],
    });
    const state = startTurn(turn.input);
    state.round = 1;
    await callStep(state);
    const second = await callStep(state);
    expect(second).toMatchObject({
      kind: "end",
      result: {
        stopReason: "end",
        text: "two",
        usage: { promptTokens: 220, completionTokens: 12, totalTokens: 232 },
        contextTokens: 120,
        contextEstimated: false,
      },
    });
    const third = await callStep(state);
    expect(third).toMatchObject({ result: { contextEstimated: true, contextTokens: 4 } });
    expect(turn.appended.every((a) => a.final)).toBe(true);
    expect(turn.appended[0]?.entries[0]).toMatchObject({
      message: { role: "assistant", content: "one" },
      meta: { model: "m-served", final: true, usage: { promptTokens: 100 } },
    });
  });

  it("a failed call ends the turn with its reason and nothing written", async () => {
    const turn = fakeTurn({
      responses: [{ ok: false, reason: "error", error: "bad gateway", partialText: "" }],
    });
    const state = startTurn(turn.input);
    state.round = 1;
    expect(await callStep(state)).toMatchObject({
      kind: "end",
      result: { stopReason: "error", error: "bad gateway" },
    });
    expect(turn.appended).toEqual([]);
  });

  it("a response with tools goes on to the batch unless a hook's onToolRequest stops it (quietly)", async () => {
    const turn = fakeTurn({ responses: [asks([call("1", "a")], "looking"), asks([call("2", "a")], "")] });
    let stopNow = false;
    turn.input.hooks = { onToolRequest: () => (stopNow ? "score too high" : undefined) };
    const state = startTurn(turn.input);
    state.round = 1;
    expect(await callStep(state)).toMatchObject({ kind: "tools", request: { text: "looking" } });
    expect(state.lastText).toBe("looking");
    expect(turn.appended).toEqual([]);
    stopNow = true;
    state.round = 2;
    expect(await callStep(state)).toMatchObject({
      kind: "end",
      result: { stopReason: "tool-loop", quiet: true, text: "looking", rounds: 2 },
    });
  });
});

describe("runTurn", () => {
  it("meets the hooks in order over two rounds and answers", async () => {
    const order: string[] = [];
    const a = countingTool("a");
    const turn = fakeTurn({
      tools: [a.tool],
      responses: [asks([call("1", "a"), call("2", "a", '{"n":2}')]), answer("done")],
      hooks: {
        prepareCall: async ({ round }) => noted(order, `prepareCall ${round}`, undefined),
        onToolRequest: () => noted(order, "onToolRequest", undefined),
        beforeTool: (c) => noted(order, `beforeTool ${c.id}`, { action: "run" }),
        afterTool: (item) => order.push(`afterTool ${item.call.id}`),
        afterBatch: (items) => noted(order, `afterBatch ${items.length}`, undefined),
      },
    });
    const result = await runTurn(turn.input);
    expect(order).toEqual([
      "prepareCall 1",
      "onToolRequest",
      "beforeTool 1",
      "afterTool 1",
      "beforeTool 2",
      "afterTool 2",
      "afterBatch 2",
      "prepareCall 2",
    ]);
    expect(result).toMatchObject({ stopReason: "end", text: "done", rounds: 2, compactions: 0 });
    // The second call sent the first response and both results.
    expect(turn.requests[1]?.slice(1).map((m) => m.role)).toEqual(["assistant", "tool", "tool"]);
    expect(Object.keys(result.guard.calls)).toHaveLength(2);
  });

  it("messages joined after a batch go into the next call and start the loop guard over", async () => {
    const a = countingTool("a");
    const joinedMessage: StoredChatMessage = { role: "user", content: "also this" };
    const turn = fakeTurn({
      tools: [a.tool],
      responses: [asks([call("1", "a")]), answer("done")],
      joined: [[joinedMessage]],
    });
    const result = await runTurn(turn.input);
    expect(turn.requests[1]?.at(-1)).toEqual(joinedMessage);
    expect(result.guard).toEqual(newLoopGuard());
  });

  it("joinMessages with nothing joined keeps the guard", async () => {
    const turn = fakeTurn({});
    const state = startTurn(turn.input);
    state.hooks[0]?.afterTool?.({ call: call("1", "a"), outcome: { ok: true, output: "x" } });
    await joinMessages(state);
    expect(state.guard.state()).not.toEqual(newLoopGuard());
  });
});
