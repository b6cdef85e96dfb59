import { randomUUID } from "node:crypto";
import type { Clock } from "../core/clock.js";
import { describeError } from "../core/errors.js";
import type { Logger } from "../core/logger.js";
import type { GatewayEvent, OutboundAttachment, StopReason, ToolDefinition } from "../plugin-api/types.js";
import { newEntryId } from "../sessions/transcript.js";
import type { MessageEntry, MessageMeta, StoredChatMessage, StoredToolCall } from "../sessions/types.js";
import { estimateTokens } from "./build-context.js";
import type { LlmClient } from "./llm-client.js";
import { redactArguments } from "./redact-arguments.js";
import { Watchdog } from "./watchdog.js";

/**
 * The watchdogs of a turn (config `inbound.reply.session.timeouts`), per model call:
 * - `firstTokenSeconds`: from the request until the first chunk of any kind (the server is alive);
 * - `prefillSeconds`: from the request until the first output (text, reasoning or a tool call), even if the
 *   server sends empty keep-alive chunks while it reads a long prompt;
 * - `noProgressSeconds`: the longest gap between two chunks;
 * - `turnLlmSeconds`: from the first output until the answer is complete (generation);
 * - `toolExecutionSeconds`: each tool call.
 */
export interface TurnTimeouts {
  prefillSeconds: number;
  firstTokenSeconds: number;
  noProgressSeconds: number;
  turnLlmSeconds: number;
  toolExecutionSeconds: number;
}

export interface TurnInput {
  turnId: string;
  sessionKey: string;
  model: string;
  /** The context: system prompt, history, and the new message(s) of the person (already in the transcript). */
  messages: StoredChatMessage[];
  tools: ToolDefinition[];
  llm: Pick<LlmClient, "stream">;
  /** Appends to the session's transcript; resolves when written (and fsync'd, for the final answer). */
  append(entries: MessageEntry[], options?: { final?: boolean }): Promise<void>;
  emit(event: GatewayEvent): void;
  /**
   * Called at each tool-batch boundary: messages from the same person that arrived meanwhile, already written to
   * the transcript by the caller, join the turn here.
   */
  takeJoined(): Promise<StoredChatMessage[]>;
  /** Aborted by `/stop` and by gateway stop. */
  signal: AbortSignal;
  clock: Clock;
  timeouts: TurnTimeouts;
  maxOutputTokens: number;
  cwd: string;
  /** Debug lines per model call and per tool call (arguments redacted to their keys and sizes). */
  log?: Pick<Logger, "debug">;
  /** Handed to tools as `ToolContext.attach`: a file to send with this turn's reply. */
  attach?: (attachment: OutboundAttachment) => void;
  /** Ends the turn with `tool-loop` after this many model calls (the loop guard proper comes later). */
  maxRounds?: number;
  /** Extra fields for the `meta` of stored assistant messages. */
  meta?: MessageMeta;
  reasoningEffort?: "minimal" | "low" | "medium" | "high";
}

export interface TurnResult {
  stopReason: StopReason;
  /** The final reply; empty unless stopReason is `end` (nothing cut off is ever returned). */
  text: string;
  model: string;
  usage?: { promptTokens: number; completionTokens: number; totalTokens: number };
  /** Prompt tokens of the last model call (or an estimate when the provider sent none). */
  contextTokens: number;
  contextEstimated: boolean;
  /** One line for the person when the turn did not end normally. */
  error?: string;
  rounds: number;
}

/**
 * One turn: call the model, run the tool calls it asks for, loop until it answers. Every message is appended to
 * the transcript as it is produced. Never throws for expected failures: the result carries a stop reason.
 * Timers are cleared in `finally`; the signal runs through every model call and every tool call.
 */
export async function runTurn(input: TurnInput): Promise<TurnResult> {
  const messages = [...input.messages];
  const totals = { promptTokens: 0, completionTokens: 0, totalTokens: 0 };
  let sawUsage = false;
  let contextTokens = estimateTokens(messages);
  let contextEstimated = true;
  const maxRounds = input.maxRounds ?? 40;
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
  });

  for (let round = 1; ; round++) {
    if (input.signal.aborted) return result("aborted", "", round - 1, "stopped");
    if (round > maxRounds) {
      return result("tool-loop", "", round - 1, `the agent made ${maxRounds} model calls without answering`);
    }
    const watchdog = new Watchdog(input.clock, input.signal);
    let llm: Awaited<ReturnType<LlmClient["stream"]>>;
    input.log?.debug("model call", {
      session: input.sessionKey,
      model: input.model,
      round,
      messages: messages.length,
      tools: input.tools.length,
    });
    try {
      watchdog.arm("first-token", input.timeouts.firstTokenSeconds);
      watchdog.arm("prefill", input.timeouts.prefillSeconds);
      llm = await input.llm.stream({
        model: input.model,
        messages,
        tools: input.tools,
        maxOutputTokens: input.maxOutputTokens,
        signal: watchdog.signal,
        ...(input.reasoningEffort ? { reasoningEffort: input.reasoningEffort } : {}),
        onFirstToken: () => {
          watchdog.disarm("prefill");
          watchdog.arm("generation", input.timeouts.turnLlmSeconds);
        },
        onProgress: () => {
          watchdog.disarm("first-token");
          watchdog.arm("no-progress", input.timeouts.noProgressSeconds);
        },
        onDelta: (text) =>
          input.emit({ type: "delta", sessionKey: input.sessionKey, turnId: input.turnId, text }),
      });
    } finally {
      watchdog.dispose();
    }
    if (!llm.ok) {
      const fired = watchdog.fired();
      if (fired) return result("timeout", "", round, `the model did not answer in time (${fired.message})`);
      if (llm.reason === "aborted") return result("aborted", "", round, "stopped");
      if (llm.reason === "output-limit") {
        return result(
          "output-limit",
          "",
          round,
          "the reply was cut off at the output limit, so it was not posted",
        );
      }
      return result("error", "", round, llm.error);
    }
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
    const usageMeta = llm.usage
      ? {
          promptTokens: llm.usage.promptTokens,
          completionTokens: llm.usage.completionTokens,
          totalTokens: llm.usage.totalTokens,
        }
      : undefined;
    const meta: MessageMeta = { ...input.meta, model: llm.model, ...(usageMeta ? { usage: usageMeta } : {}) };

    if (llm.toolCalls.length === 0) {
      const assistant: StoredChatMessage = { role: "assistant", content: llm.text };
      const finalMeta: MessageMeta = { ...meta, final: true };
      await input.append(
        [{ type: "message", id: newEntryId(), ts: ts(), message: assistant, meta: finalMeta }],
        {
          final: true,
        },
      );
      return result("end", llm.text, round);
    }

    const calls: StoredToolCall[] = llm.toolCalls.map((c) => ({ ...c, id: c.id || `call_${randomUUID()}` }));
    const assistant: StoredChatMessage = { role: "assistant", content: llm.text || null, tool_calls: calls };
    messages.push(assistant);
    await input.append([{ type: "message", id: newEntryId(), ts: ts(), message: assistant, meta }]);

    for (const call of calls) {
      input.emit({
        type: "tool-call",
        sessionKey: input.sessionKey,
        turnId: input.turnId,
        callId: call.id,
        name: call.function.name,
        arguments: call.function.arguments,
      });
      const outcome = await executeTool(call, input);
      const toolMessage: StoredChatMessage = { role: "tool", tool_call_id: call.id, content: outcome.output };
      messages.push(toolMessage);
      await input.append([
        {
          type: "message",
          id: newEntryId(),
          ts: ts(),
          message: toolMessage,
          meta: { tool: call.function.name, ok: outcome.ok },
        },
      ]);
      input.emit({
        type: "tool-result",
        sessionKey: input.sessionKey,
        turnId: input.turnId,
        callId: call.id,
        name: call.function.name,
        ok: outcome.ok,
        output: outcome.output,
      });
      if (input.signal.aborted) return result("aborted", "", round, "stopped");
    }
    messages.push(...(await input.takeJoined()));
  }
}

async function executeTool(call: StoredToolCall, input: TurnInput): Promise<{ ok: boolean; output: string }> {
  input.log?.debug("tool call", {
    session: input.sessionKey,
    tool: call.function.name,
    arguments: redactArguments(call.function.arguments),
  });
  const tool = input.tools.find((t) => t.name === call.function.name);
  if (!tool) {
    const names = input.tools.map((t) => t.name).join(", ") || "none";
    return { ok: false, output: `Unknown tool "${call.function.name}". Available tools: ${names}.` };
  }
  let args: Record<string, unknown>;
  try {
    const parsed: unknown = call.function.arguments.trim() === "" ? {} : JSON.parse(call.function.arguments);
    if (typeof parsed !== "object" || parsed === null || Array.isArray(parsed))
      throw new Error("not an object");
    args = parsed as Record<string, unknown>;
  } catch (error) {
    return {
      ok: false,
      output: `The arguments are not a JSON object (${describeError(error)}). Send valid JSON.`,
    };
  }
  const seconds = input.timeouts.toolExecutionSeconds;
  const watchdog = new Watchdog(input.clock, input.signal);
  watchdog.arm("tool", seconds);
  try {
    // A tool that ignores its signal is left behind: the turn goes on when the signal aborts.
    const outcome = await Promise.race([
      tool.execute(args, {
        signal: watchdog.signal,
        cwd: input.cwd,
        sessionKey: input.sessionKey,
        timeoutMs: seconds * 1000,
        ...(input.attach ? { attach: input.attach } : {}),
      }),
      whenAborted(watchdog.signal),
    ]);
    if (watchdog.fired()) return { ok: false, output: `${call.function.name} timed out after ${seconds} s.` };
    if (outcome === undefined) return { ok: false, output: `${call.function.name} was stopped.` };
    return outcome;
  } catch (error) {
    if (watchdog.fired()) return { ok: false, output: `${call.function.name} timed out after ${seconds} s.` };
    return { ok: false, output: `${call.function.name} failed: ${describeError(error)}` };
  } finally {
    watchdog.dispose();
  }
}

/** Resolves (with undefined) when the signal aborts; never rejects. */
function whenAborted(signal: AbortSignal): Promise<undefined> {
  return new Promise((resolve) => {
    if (signal.aborted) resolve(undefined);
    else signal.addEventListener("abort", () => resolve(undefined), { once: true });
  });
}
