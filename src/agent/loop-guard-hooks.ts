import { newEntryId } from "../sessions/transcript.js";
import {
  afterBatch,
  afterCall,
  beforeCall,
  type LoopGuardState,
  newLoopGuard,
  stopsOnToolRequest,
} from "./loop-guard.js";
import type { TurnHooks } from "./turn-hooks.js";
import type { TurnInput } from "./turn-types.js";

/** The transcript entry that saves the loop guard's state after each batch (read back when a turn resumes). */
export interface LoopGuardEntry {
  type: "loop-guard";
  id: string;
  ts: string;
  turnId: string;
  /** The journal record of the message whose turn this is (a restarted turn goes on from its state). */
  journalId?: string;
  state: LoopGuardState;
  [field: string]: unknown;
}

/** The loop guard (`loop-guard.ts`) as turn hooks; its state goes on from `input.guard` and is saved per batch. */
export function loopGuardHooks(input: Pick<TurnInput, "guard" | "turnId" | "meta" | "clock">): {
  hooks: TurnHooks;
  state(): LoopGuardState;
  reset(): void;
} {
  let state = input.guard ?? newLoopGuard();
  const guardCall = (c: { function: { name: string; arguments: string } }) => ({
    name: c.function.name,
    arguments: c.function.arguments,
  });
  const hooks: TurnHooks = {
    onToolRequest: () =>
      stopsOnToolRequest(state) ? `failed tool calls reached a score of ${state.failScore}` : undefined,
    beforeTool: (call) => {
      const decision = beforeCall(state, guardCall(call));
      state = decision.state;
      if (decision.action === "run") return { action: "run" };
      if (decision.action === "refuse") return { action: "refuse", output: decision.output };
      return { action: "stop", why: `${state.refused} repeated calls refused` };
    },
    afterTool: (item) => {
      state = afterCall(state, guardCall(item.call), item.outcome);
    },
    afterBatch: (batch) => {
      const closed = afterBatch(
        state,
        batch.map((b) => ({
          call: guardCall(b.call),
          outcome: b.outcome,
          // The guard's own refusals count neither way; a denial counts as a failed call.
          ...(b.refused && !b.denied ? { refused: true } : {}),
        })),
      );
      state = closed.state;
      const journalId = typeof input.meta?.journalId === "string" ? input.meta.journalId : undefined;
      const entry: LoopGuardEntry = {
        type: "loop-guard",
        id: newEntryId(),
        ts: new Date(input.clock.now()).toISOString(),
        turnId: input.turnId,
        ...(journalId ? { journalId } : {}),
        state,
      };
      return { ...(closed.nudge ? { nudge: closed.nudge } : {}), entries: [entry] };
    },
  };
  return {
    hooks,
    state: () => state,
    reset: () => {
      state = newLoopGuard();
    },
  };
}
