import type { StoredChatMessage } from "../sessions/types.js";
import { estimateTokens } from "./estimate-tokens.js";

/**
 * What compaction keeps (SPEC section 6, docs/runtime.md "Compaction"). Pure: messages in, a plan out.
 *
 * 1. clear tool results: every tool result but the newest `keepRecentToolResults` becomes a placeholder naming
 *    the tool and the call (the pair stays, only the output goes);
 * 2. extractive reduction: the oldest messages are dropped, keeping the newest `keepRecentMessages`; while what
 *    is left is over half the window the keep count is halved, down to 2.
 * Invariant (property-tested): a cut never separates a tool call from its results and never starts on a tool
 * result; every kept result has its call and every kept call its results (given a paired input, which
 * `buildContext` guarantees). The leading system messages (the system prompt) are always kept.
 */

export interface CompactionBudget {
  /** The model's window in tokens (`inbound.reply.agent.contextTokens`). */
  window: number;
  /** `compaction.threshold`: compaction starts when input tokens pass this share of the window. */
  threshold: number;
  keepRecentToolResults: number;
  keepRecentMessages: number;
}

export interface CompactionPlan {
  /** The leading system messages, as they were. */
  head: StoredChatMessage[];
  /** The messages left out, in order (tool results as they were, not cleared): the notes are written from them. */
  dropped: StoredChatMessage[];
  /** The messages kept, in order, old tool results cleared. */
  kept: StoredChatMessage[];
  clearedToolResults: number;
  /** The keep count that was used (after halving). */
  keepCount: number;
  /** Estimated tokens of head + kept (without notes). */
  tokensAfter: number;
}

/** The marker that starts a notes message (so a later compaction knows earlier notes when it drops them). */
export const NOTES_PREFIX = "[Notes on the earlier part of this conversation, which was compacted]";
export const MIN_KEEP = 2;

/** Whether a call whose input was `inputTokens` should be followed by a compaction. */
export function needsCompaction(inputTokens: number, budget: CompactionBudget): boolean {
  return inputTokens > budget.threshold * budget.window;
}

export function clearedPlaceholder(tool: string, callId: string): string {
  return `[tool result cleared to save context: ${tool} (call ${callId})]`;
}

export function planCompaction(
  messages: StoredChatMessage[],
  budget: CompactionBudget,
  estimate: (m: StoredChatMessage[]) => number = estimateTokens,
): CompactionPlan {
  let split = 0;
  while (split < messages.length && messages[split]?.role === "system") split++;
  const head = messages.slice(0, split);
  const body = messages.slice(split);
  const { cleared, count } = clearToolResults(body, budget.keepRecentToolResults);
  let keep = Math.max(1, budget.keepRecentMessages);
  let start = cutStart(cleared, keep);
  while (estimate([...head, ...cleared.slice(start)]) > budget.window / 2 && keep > MIN_KEEP) {
    keep = Math.max(MIN_KEEP, Math.floor(keep / 2));
    start = cutStart(cleared, keep);
  }
  const kept = cleared.slice(start);
  return {
    head,
    dropped: body.slice(0, start),
    kept,
    clearedToolResults: count,
    keepCount: keep,
    tokensAfter: estimate([...head, ...kept]),
  };
}

/** Tool results but the newest `keep` become placeholders naming the tool and the call. */
export function clearToolResults(
  body: StoredChatMessage[],
  keep: number,
): { cleared: StoredChatMessage[]; count: number } {
  const names = new Map<string, string>();
  for (const m of body) for (const c of m.tool_calls ?? []) names.set(c.id, c.function.name);
  const toolIndexes = body.flatMap((m, i) => (m.role === "tool" ? [i] : []));
  const clear = new Set(toolIndexes.slice(0, Math.max(0, toolIndexes.length - keep)));
  let count = 0;
  const cleared = body.map((m, i) => {
    if (!clear.has(i)) return m;
    const id = m.tool_call_id ?? "?";
    const placeholder = clearedPlaceholder(names.get(id) ?? "tool", id);
    if (m.content === placeholder) return m;
    count++;
    return { ...m, content: placeholder };
  });
  return { cleared, count };
}

/**
 * Where the kept part starts for the newest `keep` messages: moved back from a tool result to the assistant
 * message that made the call (a batch is never split), and forward past results that answer no kept call.
 */
export function cutStart(body: StoredChatMessage[], keep: number): number {
  let start = Math.max(0, body.length - keep);
  while (start > 0 && body[start]?.role === "tool") start--;
  while (start < body.length && body[start]?.role === "tool") start++;
  return start;
}

/**
 * Notes made without a model (step 2 standing alone): earlier notes that were dropped, and what the person said
 * in the dropped part (the newest 20 messages, 300 characters each). Empty when nothing of that was dropped.
 */
export function extractiveNotes(dropped: StoredChatMessage[]): string {
  const lines: string[] = [];
  for (const m of dropped) {
    if (m.role !== "user" || typeof m.content !== "string") continue;
    if (m.content.startsWith(NOTES_PREFIX)) lines.push(m.content.slice(NOTES_PREFIX.length).trim());
  }
  const said = dropped
    .filter((m) => m.role === "user" && typeof m.content === "string" && !m.content.startsWith(NOTES_PREFIX))
    .slice(-20)
    .map((m) => {
      const text = (m.content ?? "").replace(/\s+/g, " ").trim();
      return `- ${text.length > 300 ? `${text.slice(0, 300)}…` : text}`;
    });
  if (said.length > 0) lines.push(`Earlier messages from the person:\n${said.join("\n")}`);
  return lines.join("\n\n");
}

/** The user-role message that carries notes, inserted before the kept messages. */
export function notesMessage(notes: string): StoredChatMessage {
  return { role: "user", content: `${NOTES_PREFIX}\n${notes}` };
}
