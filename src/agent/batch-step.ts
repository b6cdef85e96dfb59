import { randomUUID } from "node:crypto";
import { newEntryId } from "../sessions/transcript.js";
import type { StoredChatMessage, StoredToolCall, TranscriptEntry } from "../sessions/types.js";
import type { ToolRequest } from "./call-step.js";
import { executeTool } from "./execute-tool.js";
import type { BatchItem, ToolGate, TurnHooks } from "./turn-hooks.js";
import { drainedResult, entryTime, type TurnState } from "./turn-state.js";
import type { TurnResult } from "./turn-types.js";

/** The result of a call a `stop` gate refused, and of every later call of its batch. */
export const NOT_RUN = "Not run: the turn ended.";
/** The result of a call a drained turn's last response asked for (see `TurnInput.drain`). */
export const NOT_RUN_DRAINED = "Not run: the gateway is stopping.";

/** A batch whose calls were gated and run: what `closeBatch` closes. */
export interface RanBatch {
  request: ToolRequest;
  /** The calls met, in order, with their outcomes (all of them, unless `input.signal` ended the batch early). */
  items: BatchItem[];
  /** The tool result of each item (same order); the batch's close may add a note to the last. */
  results: StoredChatMessage[];
  /** How many of `results` are already in the transcript (each but the last is written as it comes). */
  written: number;
  /** A gate stopped the batch (the loop guard): the turn ends quietly once the batch is closed. */
  stopped?: string;
}

export type BatchOutcome = { kind: "end"; result: TurnResult } | { kind: "ran"; batch: RanBatch };

/** A gate after the stops: a call either runs or is answered without running. */
export type CallGate = Exclude<ToolGate, { action: "stop" }>;

/**
 * The gate of one call. Once the batch is stopped every call is refused with `NOT_RUN` and no hook is asked.
 * Else the hooks' `beforeTool` are asked in order until one answers other than `run`; a `stop` refuses its own
 * call with `NOT_RUN` and stops the batch (`stopped` is its reason).
 */
export function gateCall(
  hooks: readonly TurnHooks[],
  call: StoredToolCall,
  stopped: string | undefined,
): { gate: CallGate; stopped?: string } {
  if (stopped !== undefined) return { gate: { action: "refuse", output: NOT_RUN }, stopped };
  let gate: ToolGate = { action: "run" };
  for (const hook of hooks) {
    gate = hook.beforeTool?.(call) ?? gate;
    if (gate.action !== "run") break;
  }
  if (gate.action === "stop") return { gate: { action: "refuse", output: NOT_RUN }, stopped: gate.why };
  return { gate };
}

/**
 * Step 3 of a round: the batch. The assistant message with the calls (each given an id when it has none) joins
 * the context and the transcript. A drain that began meanwhile (the answer streamed on into it) ends the turn
 * here: no call runs, each gets `NOT_RUN_DRAINED` as its result. Else each call in order: its gate
 * (`gateCall`), a `tool-call` event, the call run (`execute-tool.ts`) or refused, `afterTool` for one that ran,
 * a `tool-result` event, and its result appended, except the batch's last, which waits for `closeBatch`.
 * `input.signal` ends the batch after the call under way.
 */
export async function batchStep(state: TurnState, request: ToolRequest): Promise<BatchOutcome> {
  const { input } = state;
  const calls: StoredToolCall[] = request.toolCalls.map((c) => ({
    ...c,
    id: c.id || `call_${randomUUID()}`,
  }));
  const assistant: StoredChatMessage = {
    role: "assistant",
    content: request.text || null,
    tool_calls: calls,
  };
  state.messages.push(assistant);
  await input.append([
    { type: "message", id: newEntryId(), ts: entryTime(state), message: assistant, meta: request.meta },
  ]);
  if (input.drain?.aborted) {
    await input.append(
      calls.map((c) => ({
        type: "message",
        id: newEntryId(),
        ts: entryTime(state),
        message: { role: "tool", tool_call_id: c.id, content: NOT_RUN_DRAINED },
        meta: { tool: c.function.name, ok: false, refused: true },
      })),
    );
    return { kind: "end", result: drainedResult(state, state.round) };
  }

  const batch: RanBatch = { request, items: [], results: [], written: 0 };
  for (const [index, call] of calls.entries()) {
    const gated = gateCall(state.hooks, call, batch.stopped);
    if (gated.stopped !== undefined) batch.stopped = gated.stopped;
    const { gate } = gated;
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
    if (!refused) for (const hook of state.hooks) hook.afterTool?.(item);
    batch.items.push(item);
    batch.results.push({ role: "tool", tool_call_id: call.id, content: outcome.output });
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
    if (index < calls.length - 1) {
      await input.append([resultEntry(state, batch, index)]);
      batch.written = index + 1;
    }
  }
  return { kind: "ran", batch };
}

/** The transcript entry of the batch's `index`th result: the result, with its tool, `ok` and `refused`. */
export function resultEntry(state: TurnState, batch: RanBatch, index: number): TranscriptEntry {
  const item = batch.items[index];
  return {
    type: "message",
    id: newEntryId(),
    ts: entryTime(state),
    message: batch.results[index] as StoredChatMessage,
    meta: {
      tool: item?.call.function.name,
      ok: item?.outcome.ok,
      ...(item?.refused ? { refused: true } : {}),
    },
  };
}
