import type { InboundMessage } from "../../plugin-api/types.js";
import type { ResetMatch } from "../../sessions/lifecycle.js";
import type { RestoredProgress } from "../choose-session.js";

/**
 * What a message needs once its session is chosen, before anything is written. Pure.
 * - `context`: a group message that did not address the agent: kept as context, not answered;
 * - `answer`: a reset trigger alone ("/new"): answered at once (a restored one resumes instead);
 * - `message`: the person's message as it is stored and shown to the model, as its `lines` (the quote line of the
 *   message it replies to, then what was said, the reset trigger taken off; empty ones left out: a line per
 *   staged attachment follows them), `store`: whether it still has to be written (a restored turn may have
 *   written it).
 */
export type Prepared =
  | { kind: "context" }
  | { kind: "answer"; text: string }
  | { kind: "message"; lines: string[]; store: boolean };

export interface MessageFacts {
  text: string;
  replyTo?: InboundMessage["replyTo"];
  contextOnly: boolean;
  reset: ResetMatch;
  /** How far the previous run got with it (a restored item); absent: a fresh message. */
  progress: RestoredProgress | undefined;
  /** An approval's answer: it resumes a parked batch and stores no message of its own. */
  resumesParked?: boolean;
}

export const NEW_SESSION_ANSWER = "New session started.";

export function prepareMessage(facts: MessageFacts): Prepared {
  if (facts.contextOnly) return { kind: "context" };
  const { reset, progress } = facts;
  if (reset.matched && reset.rest.trim().length === 0 && !progress)
    return { kind: "answer", text: NEW_SESSION_ANSWER };
  const said = reset.matched ? reset.rest : facts.text;
  return {
    kind: "message",
    lines: [quoteLine(facts.replyTo), said].filter((t): t is string => t !== undefined && t.length > 0),
    store: !progress?.userStored && facts.resumesParked !== true,
  };
}

/**
 * What follows once the message is stored. Pure.
 * - `parked`: a restored turn that parked at a tool call: it parks again, no model, no tool (`open`), unless an
 *   answer resumed its batch (its record then ends: the answer's reply answers it);
 * - `redeliver`: a restored turn's reply is in the transcript already: sent again, no model call;
 * - `nothing-parked`: an approval's answer with no parked batch to resume;
 * - `model`: the model runs, once it is known (none configured: the person is told how to set one).
 */
export type NextStep =
  | { kind: "parked"; open: boolean }
  | { kind: "redeliver"; text: string }
  | { kind: "nothing-parked" }
  | { kind: "model" };

export function nextStep(facts: {
  progress: RestoredProgress | undefined;
  /** An approval's answer: whether the session has a parked batch for it to resume. */
  approval?: { parked: boolean };
}): NextStep {
  if (facts.progress?.parked !== undefined)
    return { kind: "parked", open: facts.progress.parked === "waiting" };
  if (facts.progress?.reply !== undefined) return { kind: "redeliver", text: facts.progress.reply };
  if (facts.approval && !facts.approval.parked) return { kind: "nothing-parked" };
  return { kind: "model" };
}

/** The message a person replied to, as the model is shown it (one line, at most 300 characters of it). */
export function quoteLine(replyTo: InboundMessage["replyTo"]): string | undefined {
  if (!replyTo?.text) return undefined;
  const who = replyTo.fromAgent ? "your message" : (replyTo.senderName ?? replyTo.senderId ?? "a message");
  const text = replyTo.text.replace(/\s+/g, " ").trim();
  return `[In reply to ${who}: "${text.length > 300 ? `${text.slice(0, 300)}…` : text}"]`;
}
