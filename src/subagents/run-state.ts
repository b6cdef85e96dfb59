/**
 * The life of a sub-agent run (docs/tools.md, Sub-agents), as a table: a run is `running` until it ends once —
 * `done` (a final answer), `failed` (a watchdog, the loop guard, a reply cut off, an error), `cancelled`
 * (`check_agent_run` with `cancel`) or `owner_restarted` (the gateway stopped or restarted under it) — and an ended
 * run is then reported to its parent once. An illegal step is a bug and throws. Pure.
 */

export type RunStatus = "running" | "done" | "failed" | "cancelled" | "owner_restarted";

export interface RunState {
  status: RunStatus;
  /** The parent session was handed the run's notice (it is journaled there). */
  reported: boolean;
}

export type RunEvent = "finish" | "fail" | "cancel" | "owner_restarted" | "report";

const ENDS: Readonly<Record<Exclude<RunEvent, "report">, RunStatus>> = {
  finish: "done",
  fail: "failed",
  cancel: "cancelled",
  owner_restarted: "owner_restarted",
};

export const STARTED: RunState = { status: "running", reported: false };

export function nextRunState(state: RunState, event: RunEvent): RunState {
  if (event === "report") {
    if (state.status === "running" || state.reported) {
      throw new Error(`sub-agent run: cannot report a run that is ${describe(state)}`);
    }
    return { ...state, reported: true };
  }
  if (state.status !== "running") {
    throw new Error(`sub-agent run: cannot ${event} a run that is ${describe(state)}`);
  }
  return { status: ENDS[event], reported: false };
}

/** A run that is live, or ended and not yet reported, keeps its parent session loaded. */
export function holdsParent(state: RunState): boolean {
  return state.status === "running" || !state.reported;
}

function describe(state: RunState): string {
  return state.reported ? `${state.status} and reported` : state.status;
}
