import type { CompactionEntry, StoredChatMessage, TranscriptEntry } from "../sessions/types.js";

/**
 * The messages a turn sends to the model: the system prompt, the notes of the newest compaction and the messages
 * it kept, then every message entry after it. Pure.
 * Invariant: every assistant tool call is followed by a result for it before the next non-tool message; a call
 * left without one (the gateway stopped mid-turn) gets a synthetic "interrupted" result, in the request only.
 */
export function buildContext(input: {
  systemPrompt: string;
  compaction?: CompactionEntry;
  entries: TranscriptEntry[];
}): StoredChatMessage[] {
  const messages: StoredChatMessage[] = [{ role: "system", content: input.systemPrompt }];
  if (input.compaction) {
    messages.push({
      role: "system",
      content: `Notes on the earlier part of this conversation (it was compacted):\n${input.compaction.notes}`,
    });
    messages.push(...(input.compaction.kept ?? []));
  }
  for (const entry of input.entries) {
    if (entry.type !== "message") continue;
    const message = (entry as { message?: StoredChatMessage }).message;
    if (!message || typeof message.role !== "string") continue;
    if (message.role === "system") continue;
    messages.push(message);
  }
  return pairToolCalls(messages);
}

/** Adds a synthetic result after each tool call that has none, and drops results that answer no call. */
export function pairToolCalls(messages: StoredChatMessage[]): StoredChatMessage[] {
  const out: StoredChatMessage[] = [];
  let pending: string[] = [];
  const flush = () => {
    for (const id of pending) {
      out.push({ role: "tool", tool_call_id: id, content: "(no result: the turn was interrupted)" });
    }
    pending = [];
  };
  for (const message of messages) {
    if (message.role === "tool") {
      const index = message.tool_call_id ? pending.indexOf(message.tool_call_id) : -1;
      if (index === -1) continue;
      pending.splice(index, 1);
      out.push(message);
      continue;
    }
    flush();
    out.push(message);
    if (message.role === "assistant" && message.tool_calls) pending = message.tool_calls.map((c) => c.id);
  }
  flush();
  return out;
}

/** A rough token count (characters / 4) for when the provider sends no usage. */
export function estimateTokens(messages: StoredChatMessage[]): number {
  let chars = 0;
  for (const m of messages) {
    chars += (m.content ?? "").length + 8;
    for (const call of m.tool_calls ?? [])
      chars += call.function.name.length + call.function.arguments.length;
  }
  return Math.ceil(chars / 4);
}
