import { randomUUID } from "node:crypto";
import type { StoredToolCall } from "../sessions/types.js";

/**
 * Pure assembly of a streamed chat completion: content deltas, tool-call fragments keyed by `index`
 * (`id` and `name` arrive in the first fragment, `arguments` spread over many), the finish reason, and the
 * usage that arrives in a final chunk with empty `choices`. Knows nothing of the SDK: chunks are plain data.
 */

export interface ToolCallFragment {
  index?: number;
  id?: string | null;
  type?: string | null;
  function?: { name?: string | null; arguments?: string | null } | null;
}

export interface ChunkLike {
  model?: string | null;
  choices?: {
    delta?: {
      content?: string | null;
      tool_calls?: ToolCallFragment[] | null;
      /** Reasoning text of local servers (llama.cpp, vLLM, Ollama); not kept, but it is progress. */
      reasoning_content?: unknown;
      reasoning?: unknown;
    } | null;
    finish_reason?: string | null;
  }[];
  usage?: { prompt_tokens?: number; completion_tokens?: number; total_tokens?: number } | null;
}

export type FinishReason = "stop" | "tool_calls" | "length" | "content_filter" | "unknown";

export interface LlmUsage {
  promptTokens: number;
  completionTokens: number;
  totalTokens: number;
}

export interface ChunkEffect {
  /** Content text this chunk added (may be empty). */
  text: string;
  /** The chunk carried model output (content, reasoning or a tool-call fragment). */
  produced: boolean;
  /**
   * What the chunk carried, for the watchdogs: `output` (content or a tool-call fragment), `reasoning` (only
   * reasoning text), `keepalive` (nothing: an empty delta, a role-only chunk, usage only).
   */
  kind: "output" | "reasoning" | "keepalive";
  /** Reasoning text this chunk carried (not kept in the answer; shown to live watchers). */
  reasoning?: string;
}

interface PartialCall {
  id: string;
  name: string;
  arguments: string;
}

export class ReplyAssembler {
  text = "";
  model: string | undefined;
  /** The raw finish_reason last seen; undefined while none arrived. */
  rawFinishReason: string | undefined;
  usage: LlmUsage | undefined;
  private readonly calls = new Map<number, PartialCall>();

  push(chunk: ChunkLike): ChunkEffect {
    if (chunk.model) this.model = chunk.model;
    if (chunk.usage) this.usage = mapUsage(chunk.usage);
    let added = "";
    let produced = false;
    let real = false;
    let reasoning = "";
    for (const choice of chunk.choices ?? []) {
      const delta = choice.delta;
      if (delta) {
        if (typeof delta.content === "string" && delta.content.length > 0) {
          added += delta.content;
          produced = true;
          real = true;
        }
        if (nonEmpty(delta.reasoning_content) || nonEmpty(delta.reasoning)) {
          produced = true;
          const piece =
            typeof delta.reasoning_content === "string" ? delta.reasoning_content : delta.reasoning;
          if (typeof piece === "string") reasoning += piece;
        }
        for (const [position, fragment] of (delta.tool_calls ?? []).entries()) {
          this.addFragment(fragment, position);
          produced = true;
          real = true;
        }
      }
      if (choice.finish_reason) this.rawFinishReason = choice.finish_reason;
    }
    this.text += added;
    const kind = real ? "output" : produced ? "reasoning" : "keepalive";
    return reasoning ? { text: added, produced, kind, reasoning } : { text: added, produced, kind };
  }

  get finishReason(): FinishReason {
    return mapFinishReason(this.rawFinishReason);
  }

  /** The assembled tool calls in index order; a missing id is minted, empty arguments become "{}". */
  toolCalls(): StoredToolCall[] {
    return [...this.calls.entries()]
      .sort(([a], [b]) => a - b)
      .map(([, call]) => ({
        id: call.id || `call_${randomUUID().replaceAll("-", "").slice(0, 24)}`,
        type: "function" as const,
        function: { name: call.name, arguments: call.arguments.trim() === "" ? "{}" : call.arguments },
      }));
  }

  private addFragment(fragment: ToolCallFragment, position: number): void {
    // Servers that omit `index` send one call per fragment list position.
    const index = typeof fragment.index === "number" ? fragment.index : position;
    let call = this.calls.get(index);
    if (!call) {
      call = { id: "", name: "", arguments: "" };
      this.calls.set(index, call);
    }
    if (fragment.id && !call.id) call.id = fragment.id;
    const name = fragment.function?.name;
    // The name normally comes once; a server that repeats it whole must not double it.
    if (name && name !== call.name) call.name += name;
    const args = fragment.function?.arguments;
    if (args) call.arguments += args;
  }
}

export function mapFinishReason(raw: string | undefined): FinishReason {
  switch (raw) {
    case "stop":
    case "tool_calls":
    case "length":
    case "content_filter":
      return raw;
    case "function_call":
      return "tool_calls";
    default:
      return "unknown";
  }
}

export function mapUsage(usage: NonNullable<ChunkLike["usage"]>): LlmUsage {
  const promptTokens = usage.prompt_tokens ?? 0;
  const completionTokens = usage.completion_tokens ?? 0;
  return {
    promptTokens,
    completionTokens,
    totalTokens: usage.total_tokens ?? promptTokens + completionTokens,
  };
}

function nonEmpty(value: unknown): boolean {
  return typeof value === "string" ? value.length > 0 : value !== undefined && value !== null;
}
