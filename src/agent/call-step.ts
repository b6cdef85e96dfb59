import { newEntryId } from "../sessions/transcript.js";
import type { MessageMeta, StoredChatMessage, StoredToolCall } from "../sessions/types.js";
import type { LlmUsage } from "./llm-assemble.js";
import { callModel } from "./model-call.js";
import {
  contextEstimate,
  drainedResult,
  entryTime,
  quietStop,
  type TurnState,
  turnResult,
} from "./turn-state.js";
import type { TurnResult } from "./turn-types.js";

/** A response that asks for tools and goes on to its batch. */
export interface ToolRequest {
  /** The model's text with the calls ("" when none). */
  text: string;
  /** As the model sent them (an empty id gets one in the batch). */
  toolCalls: StoredToolCall[];
  /** The `meta` of the assistant messages of this response: `input.meta`, the model, the call's usage. */
  meta: MessageMeta;
}

export type CallOutcome = { kind: "end"; result: TurnResult } | { kind: "tools"; request: ToolRequest };

/**
 * Step 2 of a round: the model call (`model-call.ts`), counted into the state's usage and context tokens. Ends
 * the turn on a failed or drained call, on a final answer (appended as the final message), and on a response
 * with tool calls that a hook's `onToolRequest` stops (a quiet stop). Otherwise the response goes on to its batch.
 */
export async function callStep(state: TurnState): Promise<CallOutcome> {
  const { input, messages, round } = state;
  input.log?.debug("model call", {
    session: input.sessionKey,
    model: input.model,
    round,
    messages: messages.length,
    tools: input.tools.length,
  });
  const call = await callModel(input, messages);
  if (!call.ok && call.drained) return { kind: "end", result: drainedResult(state, round) };
  if (!call.ok) return { kind: "end", result: turnResult(state, call.stopReason, "", round, call.error) };
  const llm = call.result;
  countCall(state, llm.usage);
  const meta: MessageMeta = {
    ...input.meta,
    model: llm.model,
    ...(llm.usage ? { usage: { ...llm.usage } } : {}),
  };

  if (llm.toolCalls.length === 0) {
    const assistant: StoredChatMessage = { role: "assistant", content: llm.text };
    await input.append(
      [
        {
          type: "message",
          id: newEntryId(),
          ts: entryTime(state),
          message: assistant,
          meta: { ...meta, final: true },
        },
      ],
      { final: true },
    );
    return { kind: "end", result: turnResult(state, "end", llm.text, round) };
  }
  // A response that asks for tools may end the turn (the loop guard's failure score).
  const stopWhy = state.hooks.map((h) => h.onToolRequest?.()).find((w) => w !== undefined);
  if (stopWhy) return { kind: "end", result: await quietStop(state, llm.text, meta, stopWhy) };
  if (llm.text.trim()) state.lastText = llm.text;
  return { kind: "tools", request: { text: llm.text, toolCalls: llm.toolCalls, meta } };
}

/** The call's usage into the turn's totals and context size (an estimate when the provider sent none). */
function countCall(state: TurnState, usage: LlmUsage | undefined): void {
  if (usage) {
    const sum = state.usage ?? { promptTokens: 0, completionTokens: 0, totalTokens: 0 };
    state.usage = {
      promptTokens: sum.promptTokens + usage.promptTokens,
      completionTokens: sum.completionTokens + usage.completionTokens,
      totalTokens: sum.totalTokens + usage.totalTokens,
    };
    state.contextTokens = usage.promptTokens;
    state.contextEstimated = false;
  } else {
    state.contextTokens = contextEstimate(state);
    state.contextEstimated = true;
  }
  state.callTokensBase = state.contextTokens;
  state.messagesAtCall = state.messages.length;
}
