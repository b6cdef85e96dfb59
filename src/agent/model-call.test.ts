import { getEventListeners } from "node:events";
import { describe, expect, it } from "vitest";
import { ManualClock } from "../core/clock.js";
import type { LlmResult, LlmStreamRequest } from "./llm-client.js";
import { callModel } from "./model-call.js";
import type { TurnInput } from "./turn-types.js";

const ok: LlmResult = { ok: true, text: "hi", toolCalls: [], finishReason: "stop", model: "m" };

/** A model client the test drives: `stream` hands the test its request and waits for the test's answer. */
function drivenLlm() {
  let take!: (call: { request: LlmStreamRequest; answer: (result: LlmResult) => void }) => void;
  const called = new Promise<{ request: LlmStreamRequest; answer: (result: LlmResult) => void }>(
    (resolve) => {
      take = resolve;
    },
  );
  return {
    called,
    llm: {
      stream: (request: LlmStreamRequest) =>
        new Promise<LlmResult>((answer) => {
          take({ request, answer });
          // An aborted call answers as the real client does: not ok, "aborted".
          request.signal.addEventListener("abort", () =>
            answer({ ok: false, reason: "aborted", error: "aborted", partialText: "" }),
          );
        }),
    },
  };
}

function input(llm: TurnInput["llm"], signals: { signal: AbortSignal; drain?: AbortSignal }): TurnInput {
  return {
    turnId: "t",
    sessionKey: "main",
    model: "m",
    messages: [],
    tools: [],
    llm,
    append: async () => {},
    emit: () => {},
    takeJoined: async () => [],
    ...signals,
    clock: new ManualClock(0),
    timeouts: {
      prefillSeconds: 60,
      firstTokenSeconds: 600,
      noProgressSeconds: 120,
      turnLlmSeconds: 180,
      toolExecutionSeconds: 60,
      sidecarLlmSeconds: 60,
    },
    maxOutputTokens: 100,
    cwd: "/",
  };
}

describe("callModel and the drain", () => {
  it("a drain before any text cancels the call and says drained; the drain's listener is removed", async () => {
    const drain = new AbortController();
    const { llm, called } = drivenLlm();
    const call = callModel(input(llm, { signal: new AbortController().signal, drain: drain.signal }), []);
    const { request } = await called;
    expect(getEventListeners(drain.signal, "abort")).toHaveLength(1);
    drain.abort("stopping");
    expect(request.signal.aborted).toBe(true);
    expect(await call).toEqual({ ok: false, stopReason: "aborted", error: "stopped", drained: true });
    expect(getEventListeners(drain.signal, "abort")).toHaveLength(0);
  });

  it("once text streams, a drain lets the call finish", async () => {
    const drain = new AbortController();
    const { llm, called } = drivenLlm();
    const call = callModel(input(llm, { signal: new AbortController().signal, drain: drain.signal }), []);
    const { request, answer } = await called;
    request.onDelta?.("hel");
    drain.abort("stopping");
    expect(request.signal.aborted).toBe(false);
    answer(ok);
    expect(await call).toMatchObject({ ok: true });
    expect(getEventListeners(drain.signal, "abort")).toHaveLength(0);
  });

  it("a /stop is not a drain, even while draining", async () => {
    const drain = new AbortController();
    const stop = new AbortController();
    const { llm, called } = drivenLlm();
    const call = callModel(input(llm, { signal: stop.signal, drain: drain.signal }), []);
    await called;
    stop.abort("stop");
    drain.abort("stopping");
    expect(await call).toEqual({ ok: false, stopReason: "aborted", error: "stopped" });
  });

  it("the client's wrappers end the call through `cancel`, on the call's own signal", async () => {
    const { llm, called } = drivenLlm();
    const turn = new AbortController();
    const call = callModel(input(llm, { signal: turn.signal }), []);
    const { request } = await called;
    request.cancel?.("not accepted");
    expect(request.signal.aborted).toBe(true);
    expect(request.signal.reason).toBe("not accepted");
    expect(turn.signal.aborted).toBe(false);
    expect(await call).toEqual({ ok: false, stopReason: "aborted", error: "stopped" });
  });
});
