/**
 * The loop guard (SPEC section 6, docs/runtime.md "The loop guard"): pure decisions over a small state that is
 * saved with the turn (a `loop-guard` transcript entry after each batch, and inside a `compaction` entry), so
 * neither compaction nor a restart resets it. Only a new turn or new person input does (`newLoopGuard()`).
 *
 * Repeats: a call is identified by its tool and its arguments with keys sorted; a run is "equal" to the last run
 * of the same call when its outcome (ok + output) is the same. After two equal runs in a row the next identical
 * call is refused with a correction as its result. Refusals 1–4 carry a nudge, the 5th a stronger one, the 6th
 * ends the turn quietly. A poll whose results change never counts.
 *
 * Failures: each failed call since the last batch that held a success adds its weight to a score
 * (`FAILURE_WEIGHTS`); at 4 the model gets a nudge naming the repeated cause, at 6 a stronger one, and from 8 on
 * the next response that asks for tools ends the turn quietly. One success in a batch resets the score.
 */

export const LOOP_GUARD_VERSION = 1;

/** The weights of a failed call. Documented in docs/runtime.md. */
export const FAILURE_WEIGHTS = {
  /** Any failed call (an error result, unknown tool, arguments that are not JSON). */
  failed: 1,
  /** Added when the tool timed out (it cost the most time). */
  timedOut: 1,
  /** Added when the same cause (tool + first line of its error) was seen before since the last success. */
  repeatedCause: 1,
} as const;

export const FAILURE_NUDGE_AT = 4;
export const FAILURE_STRONG_NUDGE_AT = 6;
export const FAILURE_STOP_AT = 8;
export const REPEATS_BEFORE_REFUSAL = 2;
export const REFUSALS_WITH_NUDGE = 4;
export const REFUSAL_STOP_AT = 6;
/** How many call signatures the state remembers (the oldest are forgotten first). */
export const MAX_REMEMBERED_CALLS = 64;

export interface LoopGuardState {
  v: typeof LOOP_GUARD_VERSION;
  /** Per call signature: a short hash of the outcome of its last run and how many runs in a row had it. */
  calls: Record<string, { outcome: string; equal: number }>;
  /** Refused repeats since the reset. */
  refused: number;
  /** The weighted failure score since the last batch with a success. */
  failScore: number;
  /** Failure causes since the last batch with a success, with how often each was seen. */
  causes: Record<string, number>;
  /** The failure nudges already given since the last success: 0 none, 4 the nudge, 6 the stronger one. */
  nudged: 0 | 4 | 6;
}

export interface GuardCall {
  name: string;
  /** The arguments as the model sent them (a JSON string, maybe invalid). */
  arguments: string;
}

export interface GuardOutcome {
  ok: boolean;
  output: string;
  timedOut?: boolean;
}

export type BeforeCallDecision =
  | { action: "run"; state: LoopGuardState }
  | { action: "refuse"; output: string; state: LoopGuardState }
  | { action: "stop"; state: LoopGuardState };

export function newLoopGuard(): LoopGuardState {
  return { v: LOOP_GUARD_VERSION, calls: {}, refused: 0, failScore: 0, causes: {}, nudged: 0 };
}

/** A state read back from disk, or a new one when it is not one this version wrote. */
export function parseLoopGuard(value: unknown): LoopGuardState | undefined {
  if (!value || typeof value !== "object") return undefined;
  const s = value as Partial<LoopGuardState>;
  if (s.v !== LOOP_GUARD_VERSION || typeof s.calls !== "object" || s.calls === null) return undefined;
  if (typeof s.refused !== "number" || typeof s.failScore !== "number") return undefined;
  return {
    v: LOOP_GUARD_VERSION,
    calls: s.calls,
    refused: s.refused,
    failScore: s.failScore,
    causes: typeof s.causes === "object" && s.causes !== null ? s.causes : {},
    nudged: s.nudged === 4 || s.nudged === 6 ? s.nudged : 0,
  };
}

/** Tool name + arguments with object keys sorted (recursively); arguments that are not JSON are used as sent. */
export function callSignature(call: GuardCall): string {
  let args: string;
  try {
    args = JSON.stringify(sortKeys(JSON.parse(call.arguments.trim() === "" ? "{}" : call.arguments)));
  } catch {
    args = call.arguments.trim();
  }
  return `${call.name}\u0000${args}`;
}

function sortKeys(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(sortKeys);
  if (value && typeof value === "object") {
    const out: Record<string, unknown> = {};
    for (const key of Object.keys(value).sort()) out[key] = sortKeys((value as Record<string, unknown>)[key]);
    return out;
  }
  return value;
}

/** FNV-1a, 32 bits, hex: enough to tell two outcomes apart, small enough to save. */
export function outcomeHash(outcome: GuardOutcome): string {
  const text = `${outcome.ok ? 1 : 0}:${outcome.output}`;
  let h = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) {
    h ^= text.charCodeAt(i);
    h = Math.imul(h, 0x01000193) >>> 0;
  }
  return h.toString(16).padStart(8, "0");
}

/** Whether `call` runs, is refused (with the correction as its result), or ends the turn. */
export function beforeCall(state: LoopGuardState, call: GuardCall): BeforeCallDecision {
  const seen = state.calls[callSignature(call)];
  if (!seen || seen.equal < REPEATS_BEFORE_REFUSAL) return { action: "run", state };
  const refused = state.refused + 1;
  const next = { ...state, refused };
  if (refused >= REFUSAL_STOP_AT) return { action: "stop", state: next };
  return { action: "refuse", output: refusalText(call, seen.equal, refused), state: next };
}

export function refusalText(call: GuardCall, runs: number, refused: number): string {
  const base = `Not run: ${call.name} was already called ${runs} times with these same arguments and gave the same result each time. Running it again will not change it.`;
  if (refused <= REFUSALS_WITH_NUDGE) {
    return `${base} Use the result you already have, try something different, or answer now.`;
  }
  return `${base} This is the last warning: stop calling tools and answer the person now with what you know.`;
}

/** Records the outcome of a call that ran. */
export function afterCall(state: LoopGuardState, call: GuardCall, outcome: GuardOutcome): LoopGuardState {
  const sig = callSignature(call);
  const hash = outcomeHash(outcome);
  const seen = state.calls[sig];
  const equal = seen && seen.outcome === hash ? seen.equal + 1 : 1;
  const calls = { ...state.calls };
  delete calls[sig];
  calls[sig] = { outcome: hash, equal };
  const keys = Object.keys(calls);
  for (const key of keys.slice(0, Math.max(0, keys.length - MAX_REMEMBERED_CALLS))) delete calls[key];
  return { ...state, calls };
}

/** The cause of a failure: the tool and the first line of its output, digits masked (ids, sizes, times). */
export function failureCause(call: GuardCall, outcome: GuardOutcome): string {
  const line = (outcome.output.split("\n").find((l) => l.trim().length > 0) ?? "").trim().slice(0, 160);
  return `${call.name}: ${line.replace(/\d+/g, "N")}`;
}

export interface BatchItem {
  call: GuardCall;
  outcome: GuardOutcome;
  /** Refused by the guard: it counts neither as a success nor as a failure. */
  refused?: boolean;
}

/** After each batch: the failure score, and a nudge for the model when it crosses 4 or 6. */
export function afterBatch(
  state: LoopGuardState,
  batch: BatchItem[],
): { state: LoopGuardState; nudge?: string } {
  const ran = batch.filter((b) => !b.refused);
  if (ran.some((b) => b.outcome.ok)) return { state: { ...state, failScore: 0, causes: {}, nudged: 0 } };
  let failScore = state.failScore;
  const causes = { ...state.causes };
  for (const { call, outcome } of ran) {
    const cause = failureCause(call, outcome);
    failScore +=
      FAILURE_WEIGHTS.failed +
      (outcome.timedOut ? FAILURE_WEIGHTS.timedOut : 0) +
      (causes[cause] ? FAILURE_WEIGHTS.repeatedCause : 0);
    causes[cause] = (causes[cause] ?? 0) + 1;
  }
  const next: LoopGuardState = { ...state, failScore, causes };
  const cause = topCause(causes);
  if (failScore >= FAILURE_STRONG_NUDGE_AT && state.nudged < FAILURE_STRONG_NUDGE_AT) {
    return {
      state: { ...next, nudged: 6 },
      nudge: `[Note from the gateway: the tool calls keep failing (${cause}). Stop retrying: answer the person now with what you know, and say what did not work.]`,
    };
  }
  if (failScore >= FAILURE_NUDGE_AT && state.nudged < FAILURE_NUDGE_AT) {
    return {
      state: { ...next, nudged: 4 },
      nudge: `[Note from the gateway: several tool calls failed, most often: ${cause}. Change your approach instead of repeating it.]`,
    };
  }
  return { state: next };
}

function topCause(causes: Record<string, number>): string {
  let best = "";
  let count = 0;
  for (const [cause, n] of Object.entries(causes)) {
    if (n > count) {
      best = cause;
      count = n;
    }
  }
  return count > 1 ? `${best} (${count} times)` : best;
}

/** From a score of 8 on, a response that asks for tools ends the turn quietly. */
export function stopsOnToolRequest(state: LoopGuardState): boolean {
  return state.failScore >= FAILURE_STOP_AT;
}
