import type { Clock } from "../core/clock.js";
import type { Logger } from "../core/logger.js";
import type { GatewayEvent, OutboundAttachment, StopReason, ToolDefinition } from "../plugin-api/types.js";
import type { MessageMeta, StoredChatMessage, StoredToolCall, TranscriptEntry } from "../sessions/types.js";
import type { LlmClient } from "./llm-client.js";
import type { LoopGuardState } from "./loop-guard.js";
import type { CompactionBudget } from "./plan-compaction.js";
import type { TimeoutSettings } from "./stream-deadlines.js";
import type { TurnHooks } from "./turn-hooks.js";
import type { ParkedDecision, TurnParked } from "./turn-parked.js";

/*
 * The values a turn (`run-turn.ts`) takes and gives. They live apart from the loop so the loop's helpers
 * (model call, tool call, hooks, steps) import them without importing the loop.
 */

export interface CompactionSettings {
  budget: CompactionBudget;
  /** Who writes the notes, in order: `compactionModel` (else the main model), then `fallbackModel`. */
  notesModels: string[];
  /** `timeouts.sidecarLlmSeconds`: each notes call. */
  sidecarSeconds: number;
}

export interface TurnInput {
  turnId: string;
  sessionKey: string;
  model: string;
  /** The context: system prompt, history, and the new message(s) of the person (already in the transcript). */
  messages: StoredChatMessage[];
  tools: ToolDefinition[];
  llm: Pick<LlmClient, "stream">;
  /** Appends any entries to the session's transcript; resolves when written (and fsync'd, for `final`). */
  append(entries: TranscriptEntry[], options?: { final?: boolean }): Promise<void>;
  emit(event: GatewayEvent): void;
  /** Tells the person one line (compaction); resolves once it is handed on. */
  notify?(text: string): Promise<void>;
  /** The session's phase during the turn: `compacting` while a compaction writes its notes, then `processing`. */
  onPhase?(phase: "compacting" | "processing"): void;
  /**
   * Called at each tool-batch boundary: messages from the same person that arrived meanwhile, already written to
   * the transcript by the caller, join the turn here (new person input: the loop guard starts over).
   */
  takeJoined(): Promise<StoredChatMessage[]>;
  /** Aborted by `/stop`, and by a gateway stop that missed its drain deadline: the turn ends at once. */
  signal: AbortSignal;
  /**
   * Aborted when the gateway drains (a stop or a restart): the turn ends at its next safe point with `drained` set.
   * No model call starts after it; the tool batch under way runs to its end (then the turn ends); a model call in
   * flight is cancelled unless it already streams answer text, which is let finish: a final answer is then the
   * reply as usual, one that asks for tools has its calls recorded as not run ("Not run: the gateway is stopping.").
   */
  drain?: AbortSignal;
  clock: Clock;
  timeouts: TimeoutSettings;
  maxOutputTokens: number;
  cwd: string;
  /** Debug lines per model call and per tool call (arguments redacted to their keys and sizes). */
  log?: Pick<Logger, "debug" | "warn">;
  /** Handed to tools as `ToolContext.attach`: a file to send with this turn's reply. */
  attach?: (attachment: OutboundAttachment) => void;
  /** The loop guard's state to go on from (this turn resumed after a restart); absent: a new guard. */
  guard?: LoopGuardState;
  /** Compaction settings; absent: the turn never compacts. */
  compaction?: CompactionSettings;
  /** The prompt tokens the session's last call reported (the store's `contextTokens`). */
  previousContextTokens?: number;
  /**
   * The turn resumes a parked batch (`TurnResult.parked`): `messages` end with its assistant message and the results
   * it has; `calls` (those without a result) run first, as `decisions` say (a call without one is gated as usual),
   * then the turn goes on with the model.
   */
  resume?: { calls: StoredToolCall[]; decisions: Readonly<Record<string, ParkedDecision>> };
  /** Extra hooks, run after the built-in ones (the loop guard, compaction), in the order given. */
  hooks?: TurnHooks | readonly TurnHooks[];
  /** Extra fields for the `meta` of stored assistant messages. */
  meta?: MessageMeta;
  reasoningEffort?: "minimal" | "low" | "medium" | "high";
}

export interface TurnResult {
  stopReason: StopReason;
  /** The final reply: set when stopReason is `end`, or on a quiet stop (`quiet`); nothing cut off, ever. */
  text: string;
  /** The turn ended early without an error for the person (the loop guard): `text` is the reply. */
  quiet?: boolean;
  model: string;
  usage?: { promptTokens: number; completionTokens: number; totalTokens: number };
  /** Prompt tokens of the last model call (or an estimate when the provider sent none, or after compaction). */
  contextTokens: number;
  contextEstimated: boolean;
  /** One line for the person when the turn did not end normally. */
  error?: string;
  rounds: number;
  /** Compactions done during this turn. */
  compactions: number;
  /** The loop guard's state at the end (saved with the turn). */
  guard: LoopGuardState;
  /** Ended at a safe point by `drain` (stopReason `aborted`): what it did is in the transcript. */
  drained?: boolean;
  readonly parked?: TurnParked;
}
