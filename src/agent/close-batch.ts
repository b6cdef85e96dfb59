import { newEntryId } from "../sessions/transcript.js";
import type { ToolParkedEntry, TranscriptEntry } from "../sessions/types.js";
import { type RanBatch, resultEntry } from "./batch-step.js";
import {
  drainedResult,
  entryTime,
  quietStop,
  stoppedResult,
  type TurnState,
  turnResult,
} from "./turn-state.js";
import type { TurnResult } from "./turn-types.js";

/**
 * Step 4 of a round: close the batch. The hooks' `afterBatch` run in order: a nudge is appended to the batch's
 * last result (when that is not yet written), their entries are written after the results. The results join the
 * context; those not yet written are appended with the entries. Then the turn ends when `input.signal` aborted
 * (stopped), when a gate asked (parked: `parkTurn`), when a gate stopped the batch (a quiet stop with the response's text), or when a drain began (a
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
  if (batch.parked) return parkTurn(state, batch.parked);
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

/**
 * Ends a turn whose batch a gate parked: a `tool-parked` entry (the calls that wait, the reason, the turn's
 * journal id) is written durably after the batch's results, and the result carries `parked`. Nothing is the reply.
 */
async function parkTurn(state: TurnState, parked: NonNullable<RanBatch["parked"]>): Promise<TurnResult> {
  const { input } = state;
  const journalId = input.meta?.journalId;
  const entry: ToolParkedEntry = {
    type: "tool-parked",
    id: newEntryId(),
    ts: entryTime(state),
    callIds: parked.callIds,
    reason: parked.reason,
    ...(typeof journalId === "string" ? { journalId } : {}),
  };
  await input.append([entry], { final: true });
  const { call, reason } = parked;
  return {
    ...turnResult(state, "aborted", "", state.round),
    parked: { callId: call.id, name: call.function.name, arguments: call.function.arguments, reason },
  };
}
