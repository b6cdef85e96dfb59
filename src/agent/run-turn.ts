import { batchStep, resumeBatch } from "./batch-step.js";
import { callStep } from "./call-step.js";
import { closeBatch, joinMessages } from "./close-batch.js";
import { prepareCall } from "./prepare-call.js";
import { startTurn } from "./turn-state.js";
import type { TurnInput, TurnResult } from "./turn-types.js";

export { NOT_RUN_DRAINED } from "./batch-step.js";
export type { TimeoutSettings as TurnTimeouts } from "./stream-deadlines.js";
export { QUIET_STOP_TEXT } from "./turn-state.js";
export type { TurnInput, TurnResult } from "./turn-types.js";

/**
 * One turn, as a loop over explicit steps on one `TurnState` (`turn-state.ts`): prepare the call (hooks may
 * compact the context), call the model, and for a response with tool calls: run the batch (hooks gate each call:
 * run it, refuse it, or end the turn), close the batch (hooks may add a nudge, save state), take joined
 * messages, and loop. Each step may end the turn with its result. Every message is appended to the transcript
 * as it is produced. A turn that resumes a parked batch (`input.resume`) runs that batch first. Never throws for expected failures: the result carries a stop reason. The signal runs
 * through every model call and every tool call; timers are cleared in `finally`. There is no ceiling on rounds:
 * the loop guard ends a turn that goes in circles.
 */
export async function runTurn(input: TurnInput): Promise<TurnResult> {
  const state = startTurn(input);
  if (input.resume) {
    // The parked batch first, as its answer decided; then the rounds go on as after any batch.
    const batch = await resumeBatch(state, input.resume);
    const closed = await closeBatch(state, batch);
    if (closed) return closed;
    await joinMessages(state);
  }
  for (;;) {
    state.round++;
    const ended = await prepareCall(state);
    if (ended) return ended;
    const call = await callStep(state);
    if (call.kind === "end") return call.result;
    const ran = await batchStep(state, call.request);
    if (ran.kind === "end") return ran.result;
    const closed = await closeBatch(state, ran.batch);
    if (closed) return closed;
    await joinMessages(state);
  }
}
