import type { StoredChatMessage } from "../sessions/types.js";

/** A rough token count (characters / 4) for when the provider sends no usage. */
export function estimateTokens(messages: readonly StoredChatMessage[]): number {
  let chars = 0;
  for (const m of messages) chars += messageChars(m);
  return tokensOfChars(chars);
}

/** What one message counts for in `estimateTokens`, in characters. */
export function messageChars(m: StoredChatMessage): number {
  let chars = (m.content ?? "").length + 8;
  for (const call of m.tool_calls ?? []) chars += call.function.name.length + call.function.arguments.length;
  return chars;
}

/** `estimateTokens` of messages of `chars` characters in all. */
export function tokensOfChars(chars: number): number {
  return Math.ceil(chars / 4);
}
