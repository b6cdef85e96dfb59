import type { TurnResult } from "../../agent/run-turn.js";
import { describeError } from "../../core/errors.js";
import type { TurnOutcome } from "../../plugin-api/types.js";
import { CUT_SHORT_INTERRUPTED, NOT_RUN_INTERRUPTED } from "../authority/authority.js";
import {
  CUT_SHORT_STOPPED,
  type DrainDecision,
  type DrainMode,
  decideDrainedTurn,
  drainNotice,
} from "../drain-resume.js";
import { isTransientError, retryDelayMs } from "../transient-error.js";
import { formatTurnNotice } from "../turn-notice.js";
import type { TurnTrace } from "./session-transcript.js";
import { NotTaken } from "./taken.js";

/**
 * How one message leaves its session: the contract between deciding (this file, pure) and doing
 * (`apply-settlement.ts`, the one place that appends the final entries, delivers, ends journal records and
 * resolves outcomes). Every way out of a message is one of these.
 */
export type Settlement =
  /** The gateway was stopping before the item ran: nothing is sent or ended (its record is replayed). */
  | { kind: "not-run" }
  /** A command answered at once, without the model: sent as a notice that ends the record. */
  | { kind: "answer"; text: string; extra: Partial<TurnOutcome> }
  /**
   * A group message that did not address the agent: kept in the transcript as context (its entry's time `at`, when
   * its session was chosen), its record `filtered`.
   */
  | { kind: "context-kept"; at: number }
  /** No model is configured: the person is told how to set one, the message is marked unanswered. */
  | { kind: "no-model"; text: string }
  /**
   * The turn's reply (`quiet-reply`: a quiet stop's text given as the reply), or a reply a restored turn had
   * already written (`reply` with `result` absent: synced to disk before it is sent again).
   */
  | { kind: "reply" | "quiet-reply"; text: string; result?: TurnResult }
  /**
   * A turn a drain ended: its own record stays open (the next start resumes it), those that joined it end;
   * the person is told `text`. `drained-tell`: answer text was shown already (the resumed turn finishes it).
   */
  | { kind: "drained-resume" | "drained-tell"; text: string; mode: DrainMode; decision: DrainDecision }
  /**
   * An automated turn a person's message ended after its tool batch (runtime/authority): its calls without a
   * result get one, the next turn is left a note (`source`: what started it), its records end `interrupted`
   * (never resumed: a reminder's firing counts as done), nobody is told (the person's own turn answers next).
   */
  | { kind: "interrupted"; source: string; by: string; results: MissingCallResult[] }
  /** Aborted by `/stop`: the records end `failed-told` without a notice (the command answers). */
  | { kind: "stopped"; result: TurnResult }
  /** The turn ended with an error for the person: told `text`, the messages marked unanswered, records end. */
  | { kind: "failed"; result: TurnResult; text: string }
  /**
   * The turn parked at a tool call its gate asked about (`open`): nothing is delivered, its record stays open (a
   * later answer resumes the batch and ends it), those that joined it end, the outcomes resolve `waiting`. Not
   * `open`: a restored parked record whose batch an answer already resumed: it ends (the answer's reply answers it).
   */
  | { kind: "parked"; open: boolean }
  /** A passing failure: the record stays open and the item runs again after `delayMs`. */
  | { kind: "retry"; why: string; attempt: number; delayMs: number }
  /** The message was not taken (its record never became durable): no reply, nothing ended. */
  | { kind: "refused" }
  /** An unexpected failure: logged, the person is told `text`, the record ends `failed-told`. */
  | { kind: "error"; why: string; text: string };

/** What a turn's settlement depends on besides its result. */
export interface TurnFacts {
  /** The turn's own abort signal fired (`/stop`, a shutdown at the drain deadline). */
  aborted: boolean;
  /** Its reason (`"stop"`, `"shutdown"`). */
  abortReason: unknown;
  /** The drain under way, if any (a turn that drained without one is treated as stopping). */
  drainMode: DrainMode | undefined;
  trace: Pick<TurnTrace, "entries" | "textStreamed" | "callsStarted">;
  /** Messages waiting for the session behind the turn. */
  othersWaiting: number;
  /** An automated turn a person's message ended (see `interruptsTurn`): who wrote, and what started the turn. */
  interrupted?: { by: string; source: string };
}

/** A result written for a call that has none when its turn ended early. */
export interface MissingCallResult {
  callId: string;
  name: string;
  content: string;
}

/** How a finished turn settles. Pure. */
export function decideSettlement(result: TurnResult, facts: TurnFacts): Settlement {
  if (result.parked && !facts.aborted) return { kind: "parked", open: true };
  if (result.stopReason === "end") return { kind: "reply", text: result.text, result };
  if (result.quiet && result.text) return { kind: "quiet-reply", text: result.text, result };
  if (result.drained && !facts.aborted && facts.interrupted) {
    const { results } = decideDrainedTurn({ ...facts.trace, othersWaiting: facts.othersWaiting });
    return {
      kind: "interrupted",
      ...facts.interrupted,
      results: results.map((r) => ({
        ...r,
        content: r.content === CUT_SHORT_STOPPED ? CUT_SHORT_INTERRUPTED : NOT_RUN_INTERRUPTED,
      })),
    };
  }
  // Drained at a safe point, or aborted when the drain deadline passed: either way the turn resumes.
  if (
    (result.drained && !facts.aborted) ||
    (result.stopReason === "aborted" && facts.abortReason === "shutdown")
  ) {
    const mode = facts.drainMode ?? "stopping";
    const decision = decideDrainedTurn({ ...facts.trace, othersWaiting: facts.othersWaiting });
    const text = drainNotice(mode, decision);
    const kind = decision.why === "after text was shown" ? "drained-tell" : "drained-resume";
    return { kind, text, mode, decision };
  }
  if (result.stopReason === "aborted") return { kind: "stopped", result };
  return { kind: "failed", result, text: formatTurnNotice(result.error ?? result.stopReason) };
}

/**
 * How a message settles when its handling threw. `refused`: the item was refused (WorkItem.refused);
 * `attempt`: the failures of it so far; `retryable`: a passing failure may be tried again (false: told at once).
 * Pure.
 */
export function settlementForError(
  error: unknown,
  item: { refused?: boolean; attempt?: number },
  retryable = true,
): Settlement {
  if (item.refused || error instanceof NotTaken) return { kind: "refused" };
  const why = describeError(error);
  if (retryable && isTransientError(error)) {
    const attempt = (item.attempt ?? 0) + 1;
    return { kind: "retry", why, attempt, delayMs: retryDelayMs(attempt) };
  }
  return {
    kind: "error",
    why,
    text: `Something went wrong: ${why}. The session is ready for your next message.`,
  };
}
