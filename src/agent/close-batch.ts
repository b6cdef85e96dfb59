import type { TranscriptEntry } from "../sessions/types.js";
import { type RanBatch, resultEntry } from "./batch-step.js";
import { drainedResult, quietStop, stoppedResult, type TurnState } from "./turn-state.js";
import type { TurnResult } from "./turn-types.js";

/**
 * Step 4 of a round: close the batch. The hooks' `afterBatch` run in order: a nudge is appended to the batch's
 * last result (when that is not yet written), their entries are written after the results. The results join the
 * context; those not yet written are appended with the entries. Then the turn ends when `input.signal` aborted
 * (stopped), when a gate stopped the batch (a quiet stop with the response's text), or when a drain began (a
 * safe point: every call has its result); else the round is over.
 */
export async function closeBatch(state: TurnState, batch: RanBatch): Promise<TurnResult | undefined> {
  const { input } = state;
  const { results, written } = batch;
  const extra: TranscriptEntry[] = [];
  for (const hook of state.hooks) {
    const closed = hook.afterBatch?.(batch.items);
    const last = results[results.length - 1];
    if (closed?.nudge && last && results.length > written) {
      last.content = `${last.content ?? ""}\n\n${closed.nudge}`;
    }
    if (closed?.entries) extra.push(...closed.entries);
  }
  state.messages.push(...results);
  const rest = results.map((_, i) => i).filter((i) => i >= written);
  await input.append([...rest.map((i) => resultEntry(state, batch, i)), ...extra]);
  if (input.signal.aborted) return stoppedResult(state, state.round);
  if (batch.stopped) return quietStop(state, batch.request.text, batch.request.meta, batch.stopped);
  if (input.drain?.aborted) return drainedResult(state, state.round);
  return undefined;
}

/**
 * Between rounds: messages from the same person that arrived meanwhile (`input.takeJoined`, already in the
 * transcript) join the context; new person input starts the loop guard over.
 */
export async function joinMessages(state: TurnState): Promise<void> {
  const joined = await state.input.takeJoined();
  if (joined.length > 0) {
    state.guard.reset();
    state.messages.push(...joined);
  }
}
