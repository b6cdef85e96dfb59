import type { StopReason } from "../plugin-api/types.js";
import type { StoredChatMessage } from "../sessions/types.js";
import type { LlmResult } from "./llm-client.js";
import {
  type DeadlineChanges,
  describeDeadline,
  onStreamEvent,
  onStreamStart,
  type StreamWatchState,
  streamLimits,
} from "./stream-deadlines.js";
import type { TurnInput } from "./turn-types.js";
import { Watchdog } from "./watchdog.js";

export type ModelCall =
  | { ok: true; result: Extract<LlmResult, { ok: true }> }
  /** `drained`: the drain cancelled the call before any answer text streamed (`TurnInput.drain`, turn-types.ts). */
  | { ok: false; stopReason: StopReason; error: string; drained?: true };

/** The reason a call is cancelled with by the drain. */
const DRAIN_CANCEL = "drain";

/**
 * One model call of a turn under its watchdogs (`stream-deadlines.ts`). A watchdog that fires aborts the HTTP
 * request (the SDK's signal), so nothing of the cancelled answer is ever used. Deltas are published as they come.
 * A drain (`input.drain`: a stop or a restart) that begins before the call has streamed any answer text cancels
 * it (its partial answer is never used; the result says `drained`); once text streams, the call is let finish.
 * One AbortSignal per call, the watchdog's: the drain and the LLM client's wrappers (`request.cancel`) end the
 * call through it.
 */
export async function callModel(input: TurnInput, messages: StoredChatMessage[]): Promise<ModelCall> {
  const limits = streamLimits(input.timeouts);
  const watchdog = new Watchdog(input.clock, input.signal);
  let streamingText = false;
  const drain = input.drain;
  const onDrain = () => {
    if (!streamingText) watchdog.cancel(DRAIN_CANCEL);
  };
  drain?.addEventListener("abort", onDrain);
  if (drain?.aborted) onDrain();
  let state: StreamWatchState = {};
  const apply = (changes: DeadlineChanges) => {
    const now = input.clock.now();
    for (const [name, at] of Object.entries(changes)) {
      if (at === null || at === undefined) watchdog.disarm(name);
      else {
        // The limit as the person is told it: from the last real output for no-progress, else from now.
        const from = name === "no-progress" ? (state.lastRealAt ?? now) : now;
        watchdog.armIn(name, at - now, Math.round((at - from) / 10) / 100);
      }
    }
  };
  let llm: LlmResult;
  try {
    apply(onStreamStart(limits, input.clock.now()));
    llm = await input.llm.stream({
      model: input.model,
      messages,
      tools: input.tools,
      maxOutputTokens: input.maxOutputTokens,
      signal: watchdog.signal,
      cancel: (reason) => watchdog.cancel(reason),
      ...(input.reasoningEffort ? { reasoningEffort: input.reasoningEffort } : {}),
      onChunk: (kind) => {
        const next = onStreamEvent(limits, state, kind, input.clock.now());
        state = next.state;
        apply(next.deadlines);
      },
      onReasoning: (text) =>
        input.emit({ type: "thinking", sessionKey: input.sessionKey, turnId: input.turnId, text }),
      onDelta: (text) => {
        if (text.length > 0) streamingText = true;
        input.emit({ type: "delta", sessionKey: input.sessionKey, turnId: input.turnId, text });
      },
    });
  } finally {
    drain?.removeEventListener("abort", onDrain);
    watchdog.dispose();
  }
  if (llm.ok) return { ok: true, result: llm };
  if (watchdog.signal.reason === DRAIN_CANCEL && !input.signal.aborted) {
    return { ok: false, stopReason: "aborted", error: "stopped", drained: true };
  }
  const fired = watchdog.fired();
  if (fired) {
    return {
      ok: false,
      stopReason: "timeout",
      error: `the model did not answer in time: ${describeDeadline(fired.watchdog, fired.seconds, limits)}`,
    };
  }
  if (llm.reason === "aborted") return { ok: false, stopReason: "aborted", error: "stopped" };
  if (llm.reason === "output-limit") {
    return {
      ok: false,
      stopReason: "output-limit",
      error: "the reply was cut off at the output limit, so it was not posted",
    };
  }
  return { ok: false, stopReason: "error", error: llm.error };
}
