import type { StopReason } from "../plugin-api/types.js";
import { newEntryId } from "../sessions/transcript.js";
import type { MessageMeta, StoredChatMessage } from "../sessions/types.js";
import { compactionHook } from "./compaction-hook.js";
import { knownChars, messageChars, tokensOfChars } from "./estimate-tokens.js";
import type { LoopGuardState } from "./loop-guard.js";
import { loopGuardHooks } from "./loop-guard-hooks.js";
import type { TurnHooks } from "./turn-hooks.js";
import type { TurnInput, TurnResult } from "./turn-types.js";

/** Said when a quiet stop finds no text of the model's to give. */
export const QUIET_STOP_TEXT =
  "I stopped here because my last steps were not getting anywhere. How should I go on?";

/**
 * What one turn carries from step to step (`prepare-call.ts`, `call-step.ts`, `batch-step.ts`,
 * `close-batch.ts`): one value, made by `startTurn` and owned by the loop; each step reads it and updates it.
 */
export interface TurnState {
  readonly input: TurnInput;
  /** The context the next model call sends: the input's messages, then the turn's own as they come. */
  readonly messages: StoredChatMessage[];
  /** The built-in hooks (the loop guard, then compaction when set), then `input.hooks`; run in this order. */
  readonly hooks: readonly TurnHooks[];
  /** The loop guard's state (saved with the turn), and its start-over for new person input. */
  readonly guard: { state(): LoopGuardState; reset(): void };
  /** The round under way: 1 for the turn's first model call; 0 before it. */
  round: number;
  /** The usage summed over the turn's calls; absent until a call reported some. */
  usage?: { promptTokens: number; completionTokens: number; totalTokens: number };
  /** Prompt tokens of the last call, or an estimate (`contextEstimated`) before it, without usage, or after compaction. */
  contextTokens: number;
  contextEstimated: boolean;
  /** The tokens the last call sent and how many messages it sent: the next call's estimate starts from them. */
  callTokensBase: number;
  messagesAtCall: number;
  /** The model's last non-blank text that came with tool calls (a quiet stop says it when it has none of its own). */
  lastText: string;
  compactions: number;
  /**
   * What `contextEstimate` counted last: the characters of `messages[0..count)`, the last of them `last`. A turn
   * only appends to its messages between counts; a compaction replaces them and clears this.
   */
  counted?: { count: number; last: StoredChatMessage | undefined; chars: number };
}

/** A new turn's state: the input's messages, the loop guard (from `input.guard`), compaction when set, `input.hooks`. */
export function startTurn(input: TurnInput): TurnState {
  const messages = [...input.messages];
  const guard = loopGuardHooks(input);
  const hooks: TurnHooks[] = [guard.hooks];
  const state: TurnState = {
    input,
    messages,
    hooks,
    guard,
    round: 0,
    contextTokens: 0,
    contextEstimated: input.previousContextTokens === undefined,
    callTokensBase: 0,
    messagesAtCall: messages.length,
    lastText: "",
    compactions: 0,
  };
  // The builder of the context may have counted it already (build-context.ts): then nothing is walked here.
  const chars = knownChars(input.messages);
  if (chars !== undefined) state.counted = { count: messages.length, last: messages.at(-1), chars };
  state.contextTokens = Math.max(contextEstimate(state), input.previousContextTokens ?? 0);
  state.callTokensBase = state.contextTokens;
  if (input.compaction) {
    hooks.push(
      compactionHook(input, input.compaction, {
        guardState: () => guard.state(),
        compacted: (tokensAfter) => {
          state.compactions++;
          state.contextTokens = tokensAfter;
          state.contextEstimated = true;
        },
      }),
    );
  }
  if (input.hooks) hooks.push(...(isHookList(input.hooks) ? input.hooks : [input.hooks]));
  return state;
}

/**
 * `estimateTokens(state.messages)`, counting only the messages added since the last count (a model call's
 * estimate after the turn's start would otherwise walk the whole context again).
 */
export function contextEstimate(state: TurnState): number {
  const { messages, counted } = state;
  let from = 0;
  let chars = 0;
  // Counting goes on only while the message counted last is still in its place (a shorter array has none there).
  if (counted && messages[counted.count - 1] === counted.last) {
    from = counted.count;
    chars = counted.chars;
  }
  for (let i = from; i < messages.length; i++) chars += messageChars(messages[i] as StoredChatMessage);
  state.counted = { count: messages.length, last: messages.at(-1), chars };
  return tokensOfChars(chars);
}

/** The turn's result as the state has it now. */
export function turnResult(
  state: TurnState,
  stopReason: StopReason,
  text: string,
  rounds: number,
  error?: string,
): TurnResult {
  return {
    stopReason,
    text,
    model: state.input.model,
    ...(state.usage ? { usage: { ...state.usage } } : {}),
    contextTokens: state.contextTokens,
    contextEstimated: state.contextEstimated,
    ...(error ? { error } : {}),
    rounds,
    compactions: state.compactions,
    guard: state.guard.state(),
  };
}

/** Ended by `input.signal` (`/stop`, or a stop that missed its drain deadline). */
export function stoppedResult(state: TurnState, rounds: number): TurnResult {
  return turnResult(state, "aborted", "", rounds, "stopped");
}

/** Ended at a safe point by `input.drain`. */
export function drainedResult(state: TurnState, rounds: number): TurnResult {
  return { ...stoppedResult(state, rounds), drained: true };
}

/** An entry's `ts`: the turn's clock, now. */
export function entryTime(state: TurnState): string {
  return new Date(state.input.clock.now()).toISOString();
}

/**
 * Ends the turn quietly (the loop guard, `why`): the model's text, else its last text of the turn, else
 * `QUIET_STOP_TEXT`, is the reply; it is appended as the final message (`loopGuard: why` in its meta).
 */
export async function quietStop(
  state: TurnState,
  responseText: string,
  meta: MessageMeta,
  why: string,
): Promise<TurnResult> {
  const { input, round } = state;
  const text = responseText.trim() || state.lastText.trim() || QUIET_STOP_TEXT;
  input.log?.warn("turn ended by the loop guard", { session: input.sessionKey, why, rounds: round });
  await input.append(
    [
      {
        type: "message",
        id: newEntryId(),
        ts: entryTime(state),
        message: { role: "assistant", content: text },
        meta: { ...meta, final: true, loopGuard: why },
      },
    ],
    { final: true },
  );
  return { ...turnResult(state, "tool-loop", text, round), quiet: true };
}

function isHookList(hooks: TurnHooks | readonly TurnHooks[]): hooks is readonly TurnHooks[] {
  return Array.isArray(hooks);
}
