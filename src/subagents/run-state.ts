/**
 * The life of a sub-agent run (docs/tools.md, Sub-agents), as a table: a run is `running`; it may wait for an
 * approval (`ask` -> `waiting-approval`, its batch parked in its transcript) or be parked by a stop at a safe point
 * (`park` -> `parked`), and `resume`s from either to `running`. It ends once — `done` (a final answer), `failed` (a
 * watchdog, the loop guard, a reply cut off, an error), `cancelled` (`check_agent_run` with `cancel`) or
 * `owner_restarted` (the gateway stopped or restarted under it and it could not park, or could not resume) — and an
 * ended run is then reported to its parent once. Only a `running` run finishes; a waiting or parked one may be
 * cancelled, failed or ended `owner_restarted`. An illegal step is a bug and throws. Pure.
 */

export type RunStatus =
  | "running"
  | "waiting-approval"
  | "parked"
  | "done"
  | "failed"
  | "cancelled"
  | "owner_restarted";

export interface RunState {
  status: RunStatus;
  /** The parent session was handed the run's notice (it is journaled there). */
  reported: boolean;
}

export type RunEvent =
  | "finish"
  | "fail"
  | "cancel"
  | "owner_restarted"
  | "ask"
  | "park"
  | "resume"
  | "report";

/** The events that end a run. */
export type EndEvent = "finish" | "fail" | "cancel" | "owner_restarted";

const ENDS: Readonly<Record<EndEvent, RunStatus>> = {
  finish: "done",
  fail: "failed",
  cancel: "cancelled",
  owner_restarted: "owner_restarted",
};

/** The statuses a run has not ended in. */
const LIVE: ReadonlySet<RunStatus> = new Set(["running", "waiting-approval", "parked"]);

/** From which statuses each event (but `report`) may step, and to which. */
const STEPS: Readonly<Record<Exclude<RunEvent, "report">, { from: readonly RunStatus[]; to: RunStatus }>> = {
  finish: { from: ["running"], to: ENDS.finish },
  fail: { from: ["running", "waiting-approval", "parked"], to: ENDS.fail },
  cancel: { from: ["running", "waiting-approval", "parked"], to: ENDS.cancel },
  owner_restarted: { from: ["running", "waiting-approval", "parked"], to: ENDS.owner_restarted },
  ask: { from: ["running"], to: "waiting-approval" },
  park: { from: ["running"], to: "parked" },
  resume: { from: ["waiting-approval", "parked"], to: "running" },
};

export const STARTED: RunState = { status: "running", reported: false };

export function nextRunState(state: RunState, event: RunEvent): RunState {
  if (event === "report") {
    if (isLive(state.status) || state.reported) {
      throw new Error(`sub-agent run: cannot report a run that is ${describe(state)}`);
    }
    return { ...state, reported: true };
  }
  const step = STEPS[event];
  if (state.reported || !step.from.includes(state.status)) {
    throw new Error(`sub-agent run: cannot ${event} a run that is ${describe(state)}`);
  }
  return { status: step.to, reported: false };
}

/** Whether a run in `status` has not ended (it runs, waits for an approval, or is parked). */
export function isLive(status: RunStatus): boolean {
  return LIVE.has(status);
}

/** A run that has not ended, or ended and is not yet reported, keeps its parent session loaded. */
export function holdsParent(state: RunState): boolean {
  return isLive(state.status) || !state.reported;
}

function describe(state: RunState): string {
  return state.reported ? `${state.status} and reported` : state.status;
}
