import { estimateTokens } from "./estimate-tokens.js";
import { contextEstimate, drainedResult, stoppedResult, type TurnState } from "./turn-state.js";
import type { TurnResult } from "./turn-types.js";

/**
 * Step 1 of a round: prepare the model call. The hooks' `prepareCall` run in order with the tokens the call will
 * send (the last call's prompt plus an estimate of what was added since; in the first round the turn's starting
 * count, which already counts every message); one that returns messages replaces the context (compaction).
 * Ends the turn, with the rounds done so far, when it is stopped or drained before the hooks or after them.
 */
export async function prepareCall(state: TurnState): Promise<TurnResult | undefined> {
  const ended = endedBeforeCall(state);
  if (ended) return ended;
  const { messages, round } = state;
  const inputTokens =
    round === 1
      ? state.callTokensBase
      : Math.max(
          contextEstimate(state),
          state.callTokensBase + estimateTokens(messages.slice(state.messagesAtCall)),
        );
  for (const hook of state.hooks) {
    const replaced = await hook.prepareCall?.({ messages, inputTokens, round });
    if (replaced) {
      messages.splice(0, messages.length, ...replaced);
      state.counted = undefined;
    }
  }
  return endedBeforeCall(state);
}

function endedBeforeCall(state: TurnState): TurnResult | undefined {
  if (state.input.signal.aborted) return stoppedResult(state, state.round - 1);
  if (state.input.drain?.aborted) return drainedResult(state, state.round - 1);
  return undefined;
}
