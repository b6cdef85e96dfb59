import type { StopReason } from "../plugin-api/types.js";
import type { StoredChatMessage } from "../sessions/types.js";
import type { LlmResult } from "./llm-client.js";
import type { TurnInput } from "./run-turn.js";
import {
  type DeadlineChanges,
  describeDeadline,
  onStreamEvent,
  onStreamStart,
  type StreamWatchState,
  streamLimits,
} from "./stream-deadlines.js";
import { Watchdog } from "./watchdog.js";

export type ModelCall =
  | { ok: true; result: Extract<LlmResult, { ok: true }> }
  | { ok: false; stopReason: StopReason; error: string };

/**
 * One model call of a turn under its watchdogs (`stream-deadlines.ts`). A watchdog that fires aborts the HTTP
 * request (the SDK's signal), so nothing of the cancelled answer is ever used. Deltas are published as they come.
 */
export async function callModel(input: TurnInput, messages: StoredChatMessage[]): Promise<ModelCall> {
  const limits = streamLimits(input.timeouts);
  const watchdog = new Watchdog(input.clock, input.signal);
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
      ...(input.reasoningEffort ? { reasoningEffort: input.reasoningEffort } : {}),
      onChunk: (kind) => {
        const next = onStreamEvent(limits, state, kind, input.clock.now());
        state = next.state;
        apply(next.deadlines);
      },
      onReasoning: (text) =>
        input.emit({ type: "thinking", sessionKey: input.sessionKey, turnId: input.turnId, text }),
      onDelta: (text) =>
        input.emit({ type: "delta", sessionKey: input.sessionKey, turnId: input.turnId, text }),
    });
  } finally {
    watchdog.dispose();
  }
  if (llm.ok) return { ok: true, result: llm };
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
