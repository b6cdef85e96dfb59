import type { TurnResult } from "../agent/turn-types.js";
import type { EndEvent, RunStatus } from "./run-state.js";

/** Why the run's signals were aborted, if they were: `check_agent_run` cancelled it, or the gateway stops. */
export type AbortCause = "cancel" | "restart";

/** The file a reply cut off at the output limit is kept in, inside the run's folder. */
export const TRUNCATED_OUTPUT = "artifacts/truncated-output.md";

/**
 * How a child's turn ends the run (run-state.ts) and what its `result.md` says. A drained turn (the gateway
 * stops) ends it `owner_restarted`: what it did is in its log, and no call of it runs again. Pure.
 */
export function runEnding(
  result: Pick<TurnResult, "stopReason" | "text" | "quiet" | "error" | "drained">,
  cause: AbortCause | undefined,
): { event: EndEvent; result: string } {
  if (cause === "cancel")
    return { event: "cancel", result: "Cancelled (check_agent_run) before it finished." };
  if (cause === "restart" || result.drained === true) {
    return {
      event: "owner_restarted",
      result:
        "The gateway stopped or restarted while this run was under way: it ended unfinished, and none of its tool calls runs again. Its log is in logs/.",
    };
  }
  if (result.stopReason === "end" || result.quiet === true) return { event: "finish", result: result.text };
  if (result.stopReason === "output-limit") {
    return {
      event: "fail",
      result: `The reply was cut off at the output limit; what was written is in ${TRUNCATED_OUTPUT}.`,
    };
  }
  return {
    event: "fail",
    result: `The run failed (${result.stopReason})${result.error ? `: ${result.error}` : "."}`,
  };
}

/** The most of a result the notice quotes; the whole is in `result.md`. */
export const NOTICE_QUOTE_CHARS = 2000;

/** The notice the parent session gets when a run ends: it names `result.md` and quotes its start. Pure. */
export function noticeText(id: string, status: RunStatus, resultPath: string, result: string): string {
  const quote =
    result.length > NOTICE_QUOTE_CHARS
      ? `${result.slice(0, NOTICE_QUOTE_CHARS)}\n[… cut here; the rest is in the file]`
      : result;
  return `[sub-agent ${id} ${status}] Its result is in ${resultPath}:\n${quote}`;
}
