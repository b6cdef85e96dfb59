import { NOT_RUN_DRAINED } from "../agent/run-turn.js";
import type { MessageEntry, TranscriptEntry } from "../sessions/types.js";

/** Why the gateway drains: a stop (SIGTERM/SIGINT, `clawdis gateway stop`) or an in-process restart. */
export type DrainMode = "stopping" | "restarting";

/** What a turn that a drain ended at a safe point had done. */
export interface DrainedTurn {
  /** What the turn wrote to the transcript after the person's message: model responses, tool results, hook state. */
  entries: TranscriptEntry[];
  /** Answer text was streamed to the person's clients during the turn (also the text of a response not stored). */
  textStreamed: boolean;
  /** Messages waiting for the same session behind the turn (not those that joined it: they go with it). */
  othersWaiting: number;
}

export type DrainTellWhy =
  | "text reached the person"
  | "others wait"
  | "a tool call has no result"
  | "first batch not done";

/**
 * `resume`: the journal record stays open and the next start (in-process or a real one) runs the turn again from
 * what the transcript holds (the replay that makes a SIGKILL safe); `tell`: the turn ends here with the stop notice
 * as its final reply, and the session takes the next message.
 */
export type DrainDecision =
  | { action: "resume"; why: "nothing done yet" | "after a tool batch" }
  | { action: "tell"; why: DrainTellWhy };

/**
 * Whether a drained turn goes on by itself after the restart. Pure.
 * - Nothing done yet (no model response stored, no text shown): resume — the message is answered after the restart
 *   as the messages waiting behind it are, whatever waits.
 * - Otherwise it resumes only when no answer text reached the person (they would get a second, different answer),
 *   nothing else waits for the session (the person went on; the old turn must not answer out of order), every
 *   tool call has its result, and at least one batch was done (the first batch had run).
 */
export function decideDrainedTurn(turn: DrainedTurn): DrainDecision {
  const messages = turn.entries
    .filter((e): e is MessageEntry => e.type === "message")
    .map((e) => (e as MessageEntry).message);
  const responses = messages.filter((m) => m.role === "assistant");
  if (responses.length === 0 && !turn.textStreamed) return { action: "resume", why: "nothing done yet" };
  const textShown =
    turn.textStreamed || responses.some((m) => typeof m.content === "string" && m.content.trim().length > 0);
  if (textShown) return { action: "tell", why: "text reached the person" };
  if (turn.othersWaiting > 0) return { action: "tell", why: "others wait" };
  const results = new Map<string, string>();
  for (const m of messages) {
    if (m.role === "tool" && m.tool_call_id) results.set(m.tool_call_id, m.content ?? "");
  }
  let batchesDone = 0;
  for (const response of responses) {
    const calls = response.tool_calls ?? [];
    if (calls.some((c) => !results.has(c.id))) return { action: "tell", why: "a tool call has no result" };
    if (calls.length > 0 && calls.every((c) => results.get(c.id) !== NOT_RUN_DRAINED)) batchesDone++;
  }
  if (batchesDone === 0) return { action: "tell", why: "first batch not done" };
  return { action: "resume", why: "after a tool batch" };
}

/** The one line the person of a drained turn gets (a local client gets it as the outcome's payload). Pure. */
export function drainNotice(mode: DrainMode, decision: DrainDecision): string {
  const doing = mode === "stopping" ? "stopping" : "restarting";
  if (decision.action === "resume") {
    return mode === "stopping"
      ? "The gateway is stopping; your message will be answered after it restarts."
      : "The gateway is restarting; your message will be answered in a moment.";
  }
  const why: Record<DrainTellWhy, string> = {
    "text reached the person": "part of my answer was already shown",
    "others wait": "more messages came in meanwhile",
    "a tool call has no result": "a tool call did not finish",
    "first batch not done": "its first tool calls had not run",
  };
  const again = mode === "stopping" ? "send it again once the gateway is back" : "send it again to go on";
  return `The gateway is ${doing}, so I stopped partway through your message (${why[decision.why]}); ${again}.`;
}
