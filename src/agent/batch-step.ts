import { randomUUID } from "node:crypto";
import { newEntryId } from "../sessions/transcript.js";
import type { StoredChatMessage, StoredToolCall, TranscriptEntry } from "../sessions/types.js";
import type { ToolRequest } from "./call-step.js";
import { executeTool } from "./execute-tool.js";
import type { BatchItem, ToolGate, TurnHooks } from "./turn-hooks.js";
import { notRunDenied, type ParkedDecision } from "./turn-parked.js";
import { drainedResult, entryTime, type TurnState } from "./turn-state.js";
import type { TurnInput, TurnResult } from "./turn-types.js";

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
  /**
   * A gate asked about `call` (`reason`): it and the calls after it (`callIds`, in order) did not run; the turn
   * ends parked once the batch is closed.
   */
  parked?: { call: StoredToolCall; reason: string; callIds: string[] };
}

export type BatchOutcome = { kind: "end"; result: TurnResult } | { kind: "ran"; batch: RanBatch };

/** A gate after the stops and asks: a call either runs or is answered without running. */
export type CallGate = Exclude<ToolGate, { action: "stop" } | { action: "ask" }>;

/** What the gate of one call decided: how it runs, the batch's stop (if any), or an ask (the batch parks here). */
export type GatedCall = { gate: CallGate; stopped?: string } | { asked: string };

/**
 * The gate of one call. Once the batch is stopped every call is refused with `NOT_RUN` and no hook is asked.
 * Else the hooks' `beforeTool` are asked in order until one answers other than `run`; a `stop` refuses its own
 * call with `NOT_RUN` and stops the batch (`stopped` is its reason); an `ask` parks the batch at this call. Pure.
 */
export function gateCall(
  hooks: readonly TurnHooks[],
  call: StoredToolCall,
  stopped: string | undefined,
): GatedCall {
  if (stopped !== undefined) return { gate: { action: "refuse", output: NOT_RUN }, stopped };
  let gate: ToolGate = { action: "run" };
  for (const hook of hooks) {
    gate = hook.beforeTool?.(call) ?? gate;
    if (gate.action !== "run") break;
  }
  if (gate.action === "stop") return { gate: { action: "refuse", output: NOT_RUN }, stopped: gate.why };
  if (gate.action === "ask") return { asked: gate.reason };
  return { gate };
}

/**
 * Step 3 of a round: the batch. The assistant message with the calls (each given an id when it has none) joins
 * the context and the transcript. A drain that began meanwhile (the answer streamed on into it) ends the turn
 * here: no call runs, each gets `NOT_RUN_DRAINED` as its result. Else the calls run (`runCalls`), each gated by
 * the hooks (`gateCall`).
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

  const batch = await runCalls(state, request, calls, (call, stopped) =>
    gateCall(state.hooks, call, stopped),
  );
  return { kind: "ran", batch };
}

/**
 * The batch a parked turn left, resumed (`TurnInput.resume`): each waiting call as its answer decided (`resumeGate`).
 */
export function resumeBatch(state: TurnState, resume: NonNullable<TurnInput["resume"]>): Promise<RanBatch> {
  const request: ToolRequest = { text: "", toolCalls: resume.calls, meta: state.input.meta ?? {} };
  return runCalls(state, request, resume.calls, (call, stopped) =>
    resumeGate(state.hooks, resume.decisions[call.id], call, stopped),
  );
}

/**
 * The gate of a parked call when its batch resumes: approved, it runs without asking the hooks again; refused, its
 * result says it was not run and why (`notRunDenied`); without a decision (or once the batch is stopped), it is
 * gated as usual (`gateCall`: an ask parks it again). Pure.
 */
export function resumeGate(
  hooks: readonly TurnHooks[],
  decision: ParkedDecision | undefined,
  call: StoredToolCall,
  stopped: string | undefined,
): GatedCall {
  if (stopped !== undefined || decision === undefined) return gateCall(hooks, call, stopped);
  if (decision.run) return { gate: { action: "run" } };
  return { gate: { action: "refuse", output: notRunDenied(decision.reason), denied: true } };
}

/**
 * The calls of a batch, in order: each one's gate (`gateFor`), a `tool-call` event, the call run
 * (`execute-tool.ts`) or refused, `afterTool` for one that ran, a `tool-result` event, and its result appended,
 * except the batch's last, which waits for `closeBatch`. An ask parks the batch at that call: it and the rest do
 * not run (`RanBatch.parked`). `input.signal` ends the batch after the call under way.
 */
export async function runCalls(
  state: TurnState,
  request: ToolRequest,
  calls: readonly StoredToolCall[],
  gateFor: (call: StoredToolCall, stopped: string | undefined) => GatedCall,
): Promise<RanBatch> {
  const { input } = state;
  const batch: RanBatch = { request, items: [], results: [], written: 0 };
  for (const [index, call] of calls.entries()) {
    const gated = gateFor(call, batch.stopped);
    if ("asked" in gated) {
      batch.parked = { call, reason: gated.asked, callIds: calls.slice(index).map((c) => c.id) };
      break;
    }
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
    const item: BatchItem = {
      call,
      outcome,
      ...(refused ? { refused: true } : {}),
      ...(gate.action === "refuse" && gate.denied ? { denied: true } : {}),
    };
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
  return batch;
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
