/**
 * When a warm session is unloaded (`inbound.reply.session.passivateAfterMinutes`). Pure decisions; the timers
 * and effects are in `session-registry.ts`.
 *
 * Contract: a session idle (no work queued or running) for the idle limit gets a final save, then a grace period
 * of `PASSIVATION_GRACE_MS`; it is released when the grace period passes with no new work and no running turn.
 * Any new work (a message for the session) before that keeps it warm and starts the idle time over.
 */

/** After the final save, how long a new message still cancels the unloading. */
export const PASSIVATION_GRACE_MS = 5_000;

/** The idle limit in ms; undefined for 0 (never unload) or a value that is not a positive finite number. */
export function idleLimitMs(passivateAfterMinutes: number): number | undefined {
  if (!Number.isFinite(passivateAfterMinutes) || passivateAfterMinutes <= 0) return undefined;
  return Math.round(passivateAfterMinutes * 60_000);
}

export type IdleDecision =
  /** Passivation is off: keep it, set no timer. */
  | { kind: "never" }
  /** A turn runs or work waits: keep it; the end of that work starts the idle time over. */
  | { kind: "busy" }
  /** Not idle long enough yet: look again in `ms`. */
  | { kind: "wait"; ms: number }
  /** Idle for the limit: save, then the grace period. */
  | { kind: "passivate" };

/** What to do when the idle timer of a warm session fires (or is first armed). */
export function decideIdle(s: {
  idleMs: number | undefined;
  busy: boolean;
  lastActiveAt: number;
  now: number;
}): IdleDecision {
  if (s.idleMs === undefined) return { kind: "never" };
  if (s.busy) return { kind: "busy" };
  const left = s.lastActiveAt + s.idleMs - s.now;
  return left > 0 ? { kind: "wait", ms: left } : { kind: "passivate" };
}

/**
 * At the end of the final save and of the grace period: release only when no new work came since the passivation
 * began (`activity` counts touches) and no turn runs; otherwise the session stays warm.
 */
export function decideRelease(s: {
  busy: boolean;
  activity: number;
  activityAtStart: number;
}): "release" | "stay" {
  if (s.busy) return "stay";
  return s.activity === s.activityAtStart ? "release" : "stay";
}
