/**
 * The watchdogs of one model call, as SPEC and netclaw define them (docs/runtime.md "Watchdogs"). Pure: events
 * and times in, absolute deadlines out; `model-call.ts` arms them on a `Watchdog`.
 *
 * - `prefill`: from the request until the first token (output or reasoning): queueing and prompt prefill;
 * - `silence`: once the first token arrived, the longest gap between two tokens (keep-alives are not tokens);
 * - `no-progress`: time without real output (content or a tool call) once the first token arrived; keep-alives
 *   and usage-only chunks do not count, and while only reasoning arrives the limit is 3 x `noProgressSeconds`
 *   since the last real output (or since the first token).
 */

export interface TimeoutSettings {
  prefillSeconds: number;
  firstTokenSeconds: number;
  noProgressSeconds: number;
  turnLlmSeconds: number;
  toolExecutionSeconds: number;
  sidecarLlmSeconds: number;
}

export interface StreamLimits {
  prefillMs: number;
  silenceMs: number;
  /** The setting the silence limit comes from. */
  silenceKey: "firstTokenSeconds" | "turnLlmSeconds";
  noProgressMs: number;
}

export const DEFAULT_FIRST_TOKEN_SECONDS = 600;
export const DEFAULT_TURN_LLM_SECONDS = 180;
export const REASONING_FACTOR = 3;

/**
 * `turnLlmSeconds` is the fallback: set away from its default 180 while `firstTokenSeconds` stays at its default
 * 600, it is the silence limit between tokens; otherwise `firstTokenSeconds` is.
 */
export function streamLimits(t: TimeoutSettings): StreamLimits {
  const fallback =
    t.turnLlmSeconds !== DEFAULT_TURN_LLM_SECONDS && t.firstTokenSeconds === DEFAULT_FIRST_TOKEN_SECONDS;
  return {
    prefillMs: t.prefillSeconds * 1000,
    silenceMs: (fallback ? t.turnLlmSeconds : t.firstTokenSeconds) * 1000,
    silenceKey: fallback ? "turnLlmSeconds" : "firstTokenSeconds",
    noProgressMs: t.noProgressSeconds * 1000,
  };
}

export type StreamEvent = "keepalive" | "reasoning" | "output";
export type DeadlineName = "prefill" | "silence" | "no-progress";
/** Absolute epoch ms per deadline; `null` clears it, a missing name leaves it as it is. */
export type DeadlineChanges = Partial<Record<DeadlineName, number | null>>;

export interface StreamWatchState {
  /** When the first token arrived; undefined during prefill. */
  firstAt?: number;
  /** When real output last arrived (the first token counts as the start). */
  lastRealAt?: number;
}

export function onStreamStart(limits: StreamLimits, now: number): DeadlineChanges {
  return { prefill: now + limits.prefillMs, silence: null, "no-progress": null };
}

export function onStreamEvent(
  limits: StreamLimits,
  state: StreamWatchState,
  event: StreamEvent,
  now: number,
): { state: StreamWatchState; deadlines: DeadlineChanges } {
  if (event === "keepalive") return { state, deadlines: {} };
  const first = state.firstAt === undefined;
  const lastRealAt = event === "output" || first ? now : (state.lastRealAt ?? now);
  const next: StreamWatchState = { firstAt: state.firstAt ?? now, lastRealAt };
  const deadlines: DeadlineChanges = {
    silence: now + limits.silenceMs,
    "no-progress":
      event === "output" ? now + limits.noProgressMs : lastRealAt + REASONING_FACTOR * limits.noProgressMs,
  };
  if (first) deadlines.prefill = null;
  return { state: next, deadlines };
}

/** What the person is told when a deadline fired (one line, with the setting to change). */
export function describeDeadline(name: string, seconds: number, limits?: StreamLimits): string {
  switch (name) {
    case "prefill":
      return `the model did not start answering within ${seconds} s (prefill; timeouts.prefillSeconds)`;
    case "silence":
      return `the model's generation went silent for ${seconds} s between tokens (timeouts.${limits?.silenceKey ?? "firstTokenSeconds"})`;
    case "no-progress":
      return `the model produced no real output for ${seconds} s (no progress; timeouts.noProgressSeconds)`;
    default:
      return `the ${name} watchdog fired after ${seconds} s`;
  }
}
