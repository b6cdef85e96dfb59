import type { TurnOutcome } from "../plugin-api/types.js";
import type { OpenAiProblem } from "./openai-request.js";

/**
 * The bodies and stream events of the OpenAI-compatible API, in the shapes the `openai` SDK parses (its types in
 * node_modules/openai/resources). Pure: each builds one value from a finished turn (or a part of one).
 */

/** What the API answers from: one reply of one turn, with the ids and time given to it when it was asked. */
export interface OpenAiReply {
  /** `chatcmpl-…` or `resp_…`, the same for a retry with the same `Idempotency-Key`. */
  id: string;
  /** Epoch seconds. */
  created: number;
  model: string;
}

/** `{error: {message, type, param, code}}`. */
export function errorBody(problem: OpenAiProblem): { error: Omit<OpenAiProblem, "status"> } {
  const { status: _status, ...error } = problem;
  return { error };
}

/** The reply's text: the payloads of the turn (the reply, or the notice of a command), one paragraph each. */
export function replyText(outcome: TurnOutcome): string {
  return outcome.payloads.map((p) => p.text).join("\n\n");
}

/**
 * A turn that failed as an error of the API: 503 `no_model` when no model is configured (the message says how to
 * set one), 503 `stopped` when it was stopped, else 502 `turn_failed`.
 */
export function outcomeProblem(outcome: TurnOutcome): OpenAiProblem | undefined {
  if (outcome.error === undefined || (outcome.stopReason !== "error" && outcome.stopReason !== "aborted"))
    return undefined;
  if (outcome.error === "no model configured") {
    return {
      status: 503,
      message: replyText(outcome) || "no model is configured on the gateway",
      type: "service_unavailable",
      param: null,
      code: "no_model",
    };
  }
  const stopped = outcome.stopReason === "aborted";
  return {
    status: stopped ? 503 : 502,
    message: `the turn ${stopped ? "was stopped" : "failed"}: ${outcome.error} (the message is in the session's transcript)`,
    type: stopped ? "service_unavailable" : "api_error",
    param: null,
    code: stopped ? "stopped" : "turn_failed",
  };
}

function finishReason(outcome: TurnOutcome): "stop" | "length" {
  return outcome.stopReason === "output-limit" ? "length" : "stop";
}

function tokens(outcome: TurnOutcome): { input: number; output: number; total: number } {
  const input = outcome.usage?.promptTokens ?? 0;
  const output = outcome.usage?.completionTokens ?? 0;
  return { input, output, total: outcome.usage?.totalTokens ?? input + output };
}

export function chatUsage(outcome: TurnOutcome): {
  prompt_tokens: number;
  completion_tokens: number;
  total_tokens: number;
} {
  const t = tokens(outcome);
  return { prompt_tokens: t.input, completion_tokens: t.output, total_tokens: t.total };
}

/** `chat.completion`: the whole answer. */
export function chatCompletion(reply: OpenAiReply, outcome: TurnOutcome): Record<string, unknown> {
  return {
    id: reply.id,
    object: "chat.completion",
    created: reply.created,
    model: reply.model,
    choices: [
      {
        index: 0,
        message: { role: "assistant", content: replyText(outcome), refusal: null },
        logprobs: null,
        finish_reason: finishReason(outcome),
      },
    ],
    usage: chatUsage(outcome),
  };
}

/**
 * One `chat.completion.chunk`: `delta` text (the first chunk carries the role), the last one `finish` with an empty
 * delta, the usage chunk (`choices` empty) `usage`.
 */
export function chatChunk(
  reply: OpenAiReply,
  part: { role?: true; text?: string; finish?: TurnOutcome; usage?: TurnOutcome },
): Record<string, unknown> {
  const base = { id: reply.id, object: "chat.completion.chunk", created: reply.created, model: reply.model };
  if (part.usage) return { ...base, choices: [], usage: chatUsage(part.usage) };
  const delta: Record<string, unknown> = {};
  if (part.role) delta.role = "assistant";
  if (part.text !== undefined) delta.content = part.text;
  return {
    ...base,
    choices: [
      {
        index: 0,
        delta,
        logprobs: null,
        finish_reason: part.finish ? finishReason(part.finish) : null,
      },
    ],
  };
}

/** The id of the one message item of a response. */
export function messageItemId(reply: OpenAiReply): string {
  return `msg_${reply.id.replace(/^resp_/, "")}`;
}

/** The message item of a response: in progress (no text yet) or completed with `text`. */
function messageItem(reply: OpenAiReply, text: string | undefined): Record<string, unknown> {
  return {
    id: messageItemId(reply),
    type: "message",
    role: "assistant",
    status: text === undefined ? "in_progress" : "completed",
    content: text === undefined ? [] : [outputText(text)],
  };
}

function outputText(text: string): Record<string, unknown> {
  return { type: "output_text", text, annotations: [], logprobs: [] };
}

/** A `response` object: `in_progress` without an outcome, else `completed` (or `incomplete` at the output limit). */
export function responseObject(reply: OpenAiReply, outcome?: TurnOutcome): Record<string, unknown> {
  const t = outcome ? tokens(outcome) : undefined;
  const incomplete = outcome?.stopReason === "output-limit";
  return {
    id: reply.id,
    object: "response",
    created_at: reply.created,
    status: outcome === undefined ? "in_progress" : incomplete ? "incomplete" : "completed",
    error: null,
    incomplete_details: incomplete ? { reason: "max_output_tokens" } : null,
    instructions: null,
    max_output_tokens: null,
    model: reply.model,
    output: outcome === undefined ? [] : [messageItem(reply, replyText(outcome))],
    parallel_tool_calls: false,
    previous_response_id: null,
    temperature: null,
    tool_choice: "auto",
    tools: [],
    top_p: null,
    metadata: {},
    usage: t
      ? {
          input_tokens: t.input,
          input_tokens_details: { cached_tokens: 0 },
          output_tokens: t.output,
          output_tokens_details: { reasoning_tokens: 0 },
          total_tokens: t.total,
        }
      : null,
  };
}

/** The Responses API's stream, event by event: each with its `type` and `sequence_number` (from 0). */
export class ResponseEvents {
  private sequence = 0;
  constructor(private readonly reply: OpenAiReply) {}

  private event(type: string, fields: Record<string, unknown>): Record<string, unknown> {
    return { type, sequence_number: this.sequence++, ...fields };
  }

  /** response.created, response.in_progress, response.output_item.added, response.content_part.added. */
  opening(): Record<string, unknown>[] {
    const response = responseObject(this.reply);
    const itemId = messageItemId(this.reply);
    return [
      this.event("response.created", { response }),
      this.event("response.in_progress", { response }),
      this.event("response.output_item.added", { output_index: 0, item: messageItem(this.reply, undefined) }),
      this.event("response.content_part.added", {
        item_id: itemId,
        output_index: 0,
        content_index: 0,
        part: outputText(""),
      }),
    ];
  }

  delta(text: string): Record<string, unknown> {
    return this.event("response.output_text.delta", {
      item_id: messageItemId(this.reply),
      output_index: 0,
      content_index: 0,
      delta: text,
      logprobs: [],
    });
  }

  /** response.output_text.done, response.content_part.done, response.output_item.done, response.completed. */
  closing(outcome: TurnOutcome): Record<string, unknown>[] {
    const text = replyText(outcome);
    const itemId = messageItemId(this.reply);
    const response = responseObject(this.reply, outcome);
    return [
      this.event("response.output_text.done", {
        item_id: itemId,
        output_index: 0,
        content_index: 0,
        text,
        logprobs: [],
      }),
      this.event("response.content_part.done", {
        item_id: itemId,
        output_index: 0,
        content_index: 0,
        part: outputText(text),
      }),
      this.event("response.output_item.done", { output_index: 0, item: messageItem(this.reply, text) }),
      this.event(response.status === "incomplete" ? "response.incomplete" : "response.completed", {
        response,
      }),
    ];
  }

  /** An `error` event (the stream then ends). */
  error(problem: OpenAiProblem): Record<string, unknown> {
    return this.event("error", { code: problem.code, message: problem.message, param: problem.param });
  }
}
