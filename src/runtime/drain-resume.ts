import { NOT_RUN_DRAINED } from "../agent/run-turn.js";
import type { MessageEntry, StoredToolCall, TranscriptEntry } from "../sessions/types.js";

/** Why the gateway drains: a stop (SIGTERM/SIGINT, `clawdis gateway stop`) or an in-process restart. */
export type DrainMode = "stopping" | "restarting";

/** What a turn that a drain ended (at a safe point, or aborted at the drain deadline) had done. */
export interface DrainedTurn {
  /** What the turn wrote to the transcript after the person's message: model responses, tool results, hook state. */
  entries: TranscriptEntry[];
  /** Answer text was streamed to the person's clients during the turn (also the text of a response not stored). */
  textStreamed: boolean;
  /** The ids of the tool calls that began to run in this turn (their `tool-call` event was published). */
  callsStarted: readonly string[];
  /** Messages waiting for the same session behind the turn (logged; they are answered after it, in order). */
  othersWaiting: number;
}

/** The result given to a call a drained turn asked for that never began (its batch was cut short). */
export const NOT_RUN_STOPPED = "Not run: the gateway stopped before this call ran.";
/** The result given to a call that began but has no result (the gateway stopped while it ran). */
export const CUT_SHORT_STOPPED =
  "Cut short: the gateway stopped while this call ran, so it may have done part of its work; check before running it again.";

export type DrainResumeWhy =
  | "nothing done yet"
  | "after a tool batch"
  | "before its first batch"
  | "after text was shown";

/** A tool result the runner writes before it leaves a drained turn open: a call of the turn that has none. */
export interface MissingResult {
  callId: string;
  name: string;
  content: typeof NOT_RUN_STOPPED | typeof CUT_SHORT_STOPPED;
}

/**
 * Every drained turn resumes: its journal record stays open and the next start (in-process or a real one) runs it
 * again from what the transcript holds (the replay that makes a SIGKILL safe), before any later message of its
 * session (the replay takes open records in the order they were accepted). An acknowledged message is never
 * handed back to the person to send again. `results`: what the turn's calls without a result get first, so the
 * resumed turn is told which calls did not run (or were cut short) and runs none of them again silently.
 */
export interface DrainDecision {
  action: "resume";
  why: DrainResumeWhy;
  results: MissingResult[];
}

/**
 * What follows a drained turn. Pure.
 * - why: "nothing done yet" (no model response stored, no text shown); "after text was shown" (answer text
 *   reached the person: streamed, or in a stored response; the resumed turn has that response in its context and
 *   goes on from it, it does not start over); "after a tool batch" (at least one batch ran); "before its first
 *   batch" (every call so far was recorded as not run).
 * - results: one per tool call of the turn that has no result: cut short when it began, else not run.
 */
export function decideDrainedTurn(turn: DrainedTurn): DrainDecision {
  const messages = turn.entries
    .filter((e): e is MessageEntry => e.type === "message")
    .map((e) => (e as MessageEntry).message);
  const responses = messages.filter((m) => m.role === "assistant");
  const answered = new Map<string, string>();
  for (const m of messages) {
    if (m.role === "tool" && m.tool_call_id) answered.set(m.tool_call_id, m.content ?? "");
  }
  const started = new Set(turn.callsStarted);
  const results: MissingResult[] = responses
    .flatMap((r): StoredToolCall[] => r.tool_calls ?? [])
    .filter((c) => !answered.has(c.id))
    .map((c) => ({
      callId: c.id,
      name: c.function.name,
      content: started.has(c.id) ? CUT_SHORT_STOPPED : NOT_RUN_STOPPED,
    }));
  const decision = (why: DrainResumeWhy): DrainDecision => ({ action: "resume", why, results });
  if (responses.length === 0 && !turn.textStreamed) return decision("nothing done yet");
  const textShown =
    turn.textStreamed || responses.some((m) => typeof m.content === "string" && m.content.trim().length > 0);
  if (textShown) return decision("after text was shown");
  // A call ran when it began, or has a result other than "not run" (a refusal by the loop guard counts: it was
  // answered).
  const ran = responses
    .flatMap((r) => r.tool_calls ?? [])
    .some((c) => started.has(c.id) || (answered.has(c.id) && answered.get(c.id) !== NOT_RUN_DRAINED));
  return decision(ran ? "after a tool batch" : "before its first batch");
}

/** The one line the person of a drained turn gets (a local client gets it as the outcome's payload). Pure. */
export function drainNotice(mode: DrainMode, decision: Pick<DrainDecision, "why">): string {
  if (decision.why === "after text was shown") {
    return mode === "stopping"
      ? "The gateway is stopping; I will finish this answer after it restarts."
      : "The gateway is restarting; I will finish this answer in a moment.";
  }
  return mode === "stopping"
    ? "The gateway is stopping; your message will be answered after it restarts."
    : "The gateway is restarting; your message will be answered in a moment.";
}
