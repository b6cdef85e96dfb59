import type { StoredChatMessage, StoredToolCall, TranscriptEntry } from "../sessions/types.js";

/** A tool call and what it gave (a refused call's outcome is the correction the model is shown). */
export interface BatchItem {
  call: StoredToolCall;
  outcome: ToolOutcome;
  /** Refused by a hook: not run. */
  refused?: boolean;
  /** Refused as a denial (`ToolGate` refuse with `denied`): the loop guard counts it as a failed call. */
  denied?: boolean;
}

export interface ToolOutcome {
  ok: boolean;
  output: string;
  /** The tool watchdog (`toolExecutionSeconds`) fired. */
  timedOut?: boolean;
}

/**
 * Whether a tool call runs, is answered without running (`output` is its result), ends the turn quietly, or waits
 * for an answer (`ask`: the call and the rest of its batch do not run; the turn ends parked, `TurnResult.parked`).
 */
export type ToolGate =
  | { action: "run" }
  /** `denied`: a denial (the approvals policy, a person's `/deny`), which the loop guard counts as a failure. */
  | { action: "refuse"; output: string; denied?: boolean }
  | { action: "stop"; why: string }
  | { action: "ask"; reason: string };

/**
 * The places where rules plug into the turn loop (`run-turn.ts`), in the order the loop meets them. Every hook is
 * optional; hooks run in the order given. The loop guard and compaction are hooks; a sub-agent run gets the same.
 */
export interface TurnHooks {
  /** Before each model call: may return messages to send instead (compaction). */
  prepareCall?(step: {
    messages: StoredChatMessage[];
    inputTokens: number;
    round: number;
  }): Promise<StoredChatMessage[] | undefined>;
  /** After a response that asks for tools: a reason ends the turn quietly with the model's text. */
  onToolRequest?(): string | undefined;
  /** Before each tool call. */
  beforeTool?(call: StoredToolCall): ToolGate;
  /** After each tool call that ran. */
  afterTool?(item: BatchItem): void;
  /**
   * After each batch: a note for the model (appended to the batch's last result) and entries to write with the
   * batch (the hook's saved state). The entries' `ts` is set by the hook.
   */
  afterBatch?(batch: BatchItem[]): { nudge?: string; entries?: TranscriptEntry[] } | undefined;
}
