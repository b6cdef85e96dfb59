/**
 * The phase of one loaded session (SPEC section 6, netclaw's lifecycle), as one small state machine:
 * - `recovering`: the session was loaded to replay what the journal holds for it (a start after a crash or stop);
 * - `ready`: loaded, nothing running;
 * - `processing`: a turn runs (a model call or a tool in flight); new input is kept;
 * - `compacting`: the turn compacts its context (notes being written); new input is kept, as in processing;
 * - `passivating`: the final save and the grace period before the session is unloaded; new input aborts it.
 *
 * The transitions are the table below and nothing else: an illegal one is a bug, and `nextPhase` throws for it
 * (the caller logs it with the session key); nothing falls back to a phase silently.
 */
export type SessionPhase = "recovering" | "ready" | "processing" | "compacting" | "passivating";

export const SESSION_PHASES: readonly SessionPhase[] = [
  "recovering",
  "ready",
  "processing",
  "compacting",
  "passivating",
];

/** From each phase, the phases it may go to. */
export const PHASE_TRANSITIONS: Readonly<Record<SessionPhase, readonly SessionPhase[]>> = {
  // Replaying: its turn runs (processing), or nothing was left to run (ready).
  recovering: ["processing", "ready"],
  // A turn starts, or the idle time is up.
  ready: ["processing", "passivating"],
  // The turn ends, or it compacts its context.
  processing: ["ready", "compacting"],
  // The compaction is over: the turn goes on (processing), or it ended during it (ready).
  compacting: ["processing", "ready"],
  // New input aborts the passivation; an unload ends the machine (no phase after it).
  passivating: ["ready"],
};

export class IllegalPhaseTransition extends Error {
  constructor(
    readonly from: SessionPhase,
    readonly to: SessionPhase,
  ) {
    super(`illegal session phase transition ${from} -> ${to}`);
    this.name = "IllegalPhaseTransition";
  }
}

/** Whether `from -> to` is in the table. Pure. */
export function canTransition(from: SessionPhase, to: SessionPhase): boolean {
  return PHASE_TRANSITIONS[from].includes(to);
}

/** `to`, when `from -> to` is in the table; throws IllegalPhaseTransition otherwise. Pure. */
export function nextPhase(from: SessionPhase, to: SessionPhase): SessionPhase {
  if (!canTransition(from, to)) throw new IllegalPhaseTransition(from, to);
  return to;
}
