import { randomUUID } from "node:crypto";
import type { Clock } from "../core/clock.js";
import type { Logger } from "../core/logger.js";
import type { GatewayEvent, OutboundAttachment, StopReason, ToolDefinition } from "../plugin-api/types.js";
import { newEntryId } from "../sessions/transcript.js";
import type { MessageMeta, StoredChatMessage, StoredToolCall, TranscriptEntry } from "../sessions/types.js";
import { type CompactionSettings, compactionHook } from "./compaction-hook.js";
import { estimateTokens } from "./estimate-tokens.js";
import { executeTool } from "./execute-tool.js";
import type { LlmClient } from "./llm-client.js";
import type { LoopGuardState } from "./loop-guard.js";
import { loopGuardHooks } from "./loop-guard-hooks.js";
import { callModel } from "./model-call.js";
import type { TimeoutSettings } from "./stream-deadlines.js";
import type { BatchItem, ToolGate, TurnHooks } from "./turn-hooks.js";
import type { TurnParked } from "./turn-parked.js";

export type { TimeoutSettings as TurnTimeouts } from "./stream-deadlines.js";

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
  /** Extra hooks, run after the built-in ones (the loop guard, compaction). */
  hooks?: TurnHooks;
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

const NOT_RUN = "Not run: the turn ended.";
/** The result of a call a drained turn's last response asked for (see `TurnInput.drain`). */
export const NOT_RUN_DRAINED = "Not run: the gateway is stopping.";

/** Said when a quiet stop finds no text of the model's to give. */
export const QUIET_STOP_TEXT =
  "I stopped here because my last steps were not getting anywhere. How should I go on?";

/**
 * One turn, as a loop over explicit steps: prepare the call (hooks may compact the context), call the model,
 * and for a response with tool calls: gate each call (hooks may refuse it or end the turn), run it, record it,
 * then close the batch (hooks may add a nudge, save state), take joined messages, and loop. Every message is
 * appended to the transcript as it is produced. Never throws for expected failures: the result carries a stop
 * reason. The signal runs through every model call and every tool call; timers are cleared in `finally`.
 * There is no ceiling on rounds: the loop guard ends a turn that goes in circles.
 */
export async function runTurn(input: TurnInput): Promise<TurnResult> {
  const messages = [...input.messages];
  const totals = { promptTokens: 0, completionTokens: 0, totalTokens: 0 };
  let sawUsage = false;
  let contextTokens = Math.max(estimateTokens(messages), input.previousContextTokens ?? 0);
  let contextEstimated = input.previousContextTokens === undefined;
  let lastText = "";
  let compactions = 0;
  const guard = loopGuardHooks(input);
  const hooks: TurnHooks[] = [guard.hooks];
  if (input.compaction) {
    hooks.push(
      compactionHook(input, input.compaction, {
        guardState: () => guard.state(),
        compacted: (tokensAfter) => {
          compactions++;
          contextTokens = tokensAfter;
          contextEstimated = true;
        },
      }),
    );
  }
  if (input.hooks) hooks.push(input.hooks);
  const ts = () => new Date(input.clock.now()).toISOString();
  const result = (stopReason: StopReason, text: string, rounds: number, error?: string): TurnResult => ({
    stopReason,
    text,
    model: input.model,
    ...(sawUsage ? { usage: totals } : {}),
    contextTokens,
    contextEstimated,
    ...(error ? { error } : {}),
    rounds,
    compactions,
    guard: guard.state(),
  });
  const quietStop = async (
    rounds: number,
    responseText: string,
    meta: MessageMeta,
    why: string,
  ): Promise<TurnResult> => {
    const text = responseText.trim() || lastText.trim() || QUIET_STOP_TEXT;
    input.log?.warn("turn ended by the loop guard", { session: input.sessionKey, why, rounds });
    await input.append(
      [
        {
          type: "message",
          id: newEntryId(),
          ts: ts(),
          message: { role: "assistant", content: text },
          meta: { ...meta, final: true, loopGuard: why },
        },
      ],
      { final: true },
    );
    return { ...result("tool-loop", text, rounds), quiet: true };
  };
  let callTokensBase = contextTokens;
  let messagesAtCall = messages.length;
  const drained = (rounds: number): TurnResult => ({
    ...result("aborted", "", rounds, "stopped"),
    drained: true,
  });

  for (let round = 1; ; round++) {
    if (input.signal.aborted) return result("aborted", "", round - 1, "stopped");
    if (input.drain?.aborted) return drained(round - 1);
    // Step 1: prepare the call. The tokens the call will send: the last call's prompt plus what was added since.
    // (In the first round that is `callTokensBase` itself: nothing was added, and it already counts every message.)
    const inputTokens =
      round === 1
        ? callTokensBase
        : Math.max(estimateTokens(messages), callTokensBase + estimateTokens(messages.slice(messagesAtCall)));
    for (const hook of hooks) {
      const replaced = await hook.prepareCall?.({ messages, inputTokens, round });
      if (replaced) messages.splice(0, messages.length, ...replaced);
    }
    if (input.signal.aborted) return result("aborted", "", round - 1, "stopped");
    if (input.drain?.aborted) return drained(round - 1);

    // Step 2: the model call.
    input.log?.debug("model call", {
      session: input.sessionKey,
      model: input.model,
      round,
      messages: messages.length,
      tools: input.tools.length,
    });
    const call = await callModel(input, messages);
    if (!call.ok && call.drained) return drained(round);
    if (!call.ok) return result(call.stopReason, "", round, call.error);
    const llm = call.result;
    if (llm.usage) {
      sawUsage = true;
      totals.promptTokens += llm.usage.promptTokens;
      totals.completionTokens += llm.usage.completionTokens;
      totals.totalTokens += llm.usage.totalTokens;
      contextTokens = llm.usage.promptTokens;
      contextEstimated = false;
    } else {
      contextTokens = estimateTokens(messages);
      contextEstimated = true;
    }
    callTokensBase = contextTokens;
    messagesAtCall = messages.length;
    const meta: MessageMeta = {
      ...input.meta,
      model: llm.model,
      ...(llm.usage ? { usage: { ...llm.usage } } : {}),
    };

    if (llm.toolCalls.length === 0) {
      const assistant: StoredChatMessage = { role: "assistant", content: llm.text };
      await input.append(
        [{ type: "message", id: newEntryId(), ts: ts(), message: assistant, meta: { ...meta, final: true } }],
        { final: true },
      );
      return result("end", llm.text, round);
    }
    // A response that asks for tools may end the turn (the loop guard's failure score).
    const stopWhy = hooks.map((h) => h.onToolRequest?.()).find((w) => w !== undefined);
    if (stopWhy) return quietStop(round, llm.text, meta, stopWhy);
    if (llm.text.trim()) lastText = llm.text;

    // Step 3: the batch.
    const calls: StoredToolCall[] = llm.toolCalls.map((c) => ({ ...c, id: c.id || `call_${randomUUID()}` }));
    const assistant: StoredChatMessage = { role: "assistant", content: llm.text || null, tool_calls: calls };
    messages.push(assistant);
    await input.append([{ type: "message", id: newEntryId(), ts: ts(), message: assistant, meta }]);
    if (input.drain?.aborted) {
      // The answer streamed on into the drain and asks for tools: none runs, each call gets its result.
      await input.append(
        calls.map((c) => ({
          type: "message",
          id: newEntryId(),
          ts: ts(),
          message: { role: "tool", tool_call_id: c.id, content: NOT_RUN_DRAINED },
          meta: { tool: c.function.name, ok: false, refused: true },
        })),
      );
      return drained(round);
    }

    const batch: BatchItem[] = [];
    const results: StoredChatMessage[] = [];
    let written = 0;
    const resultEntry = (i: number): TranscriptEntry => ({
      type: "message",
      id: newEntryId(),
      ts: ts(),
      message: results[i] as StoredChatMessage,
      meta: {
        tool: batch[i]?.call.function.name,
        ok: batch[i]?.outcome.ok,
        ...(batch[i]?.refused ? { refused: true } : {}),
      },
    });
    let stopped: string | undefined;
    for (const [index, call] of calls.entries()) {
      let gate: ToolGate = { action: "run" };
      if (stopped === undefined) {
        for (const hook of hooks) {
          gate = hook.beforeTool?.(call) ?? gate;
          if (gate.action !== "run") break;
        }
      } else {
        gate = { action: "refuse", output: NOT_RUN };
      }
      if (gate.action === "stop") {
        stopped = gate.why;
        gate = { action: "refuse", output: NOT_RUN };
      }
      input.emit({
        type: "tool-call",
        sessionKey: input.sessionKey,
        turnId: input.turnId,
        callId: call.id,
        name: call.function.name,
        arguments: call.function.arguments,
      });
      const refused = gate.action === "refuse";
      const outcome =
        gate.action === "refuse" ? { ok: false, output: gate.output } : await executeTool(call, input);
      const item: BatchItem = { call, outcome, ...(refused ? { refused: true } : {}) };
      if (!refused) for (const hook of hooks) hook.afterTool?.(item);
      batch.push(item);
      results.push({ role: "tool", tool_call_id: call.id, content: outcome.output });
      input.emit({
        type: "tool-result",
        sessionKey: input.sessionKey,
        turnId: input.turnId,
        callId: call.id,
        name: call.function.name,
        ok: outcome.ok,
        output: outcome.output,
      });
      if (input.signal.aborted) break;
      // Each result is written as it comes, but the batch's last one waits for the batch's close (its note).
      if (index < calls.length - 1) {
        await input.append([resultEntry(index)]);
        written = index + 1;
      }
    }
    // Step 4: close the batch: hooks may add a note for the model to the last result, and save their state.
    const extra: TranscriptEntry[] = [];
    for (const hook of hooks) {
      const closed = hook.afterBatch?.(batch);
      const last = results[results.length - 1];
      if (closed?.nudge && last && results.length > written) {
        last.content = `${last.content ?? ""}\n\n${closed.nudge}`;
      }
      if (closed?.entries) extra.push(...closed.entries);
    }
    messages.push(...results);
    const rest = results.map((_, i) => i).filter((i) => i >= written);
    await input.append([...rest.map(resultEntry), ...extra]);
    if (input.signal.aborted) return result("aborted", "", round, "stopped");
    if (stopped) return quietStop(round, llm.text, meta, stopped);
    // The batch is over: a drain ends the turn here (a safe point: every call has its result).
    if (input.drain?.aborted) return drained(round);
    const joined = await input.takeJoined();
    if (joined.length > 0) {
      guard.reset();
      messages.push(...joined);
    }
  }
}
