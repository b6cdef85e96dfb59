import type { StoredChatMessage } from "../sessions/types.js";

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
