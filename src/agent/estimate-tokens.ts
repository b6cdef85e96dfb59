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

/**
 * The characters (`messageChars`) of context arrays whose builder counted them as it built them
 * (build-context.ts): the turn's first estimate reads the sum instead of walking the array again. An array is
 * never changed after it is registered (the turn copies it).
 */
const counted = new WeakMap<readonly StoredChatMessage[], number>();

export function noteChars(messages: readonly StoredChatMessage[], chars: number): void {
  counted.set(messages, chars);
}

/** The characters of `messages` as its builder counted them, if it did. */
export function knownChars(messages: readonly StoredChatMessage[]): number | undefined {
  return counted.get(messages);
}
