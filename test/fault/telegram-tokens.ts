import type { FakeTelegram } from "../fakes/telegram-server.js";

/**
 * Counting answers on the Bot API side: each message a test sends carries a token (`tok-<who>-<n>`), the echo
 * model repeats every message it answers (`echo: a | b` when b joined a's turn), so each token must reach its
 * chat in exactly one delivered text. Pure, over what the fake recorded.
 */
export const TOKEN = /tok-[a-z0-9_]+-\d+/g;

/** How often each token reached `chatId`, in the order they arrived there. */
export function tokensTo(tg: FakeTelegram, chatId: number | string): string[] {
  return tg.textsTo(chatId).flatMap((text) => text.match(TOKEN) ?? []);
}

/** Tokens of `expected` never delivered, and tokens delivered more than once (with their counts). */
export function audit(
  expected: readonly string[],
  delivered: readonly string[],
): { lost: string[]; twice: Record<string, number> } {
  const counts = new Map<string, number>();
  for (const token of delivered) counts.set(token, (counts.get(token) ?? 0) + 1);
  const twice: Record<string, number> = {};
  for (const [token, n] of counts) if (n > 1) twice[token] = n;
  return { lost: expected.filter((t) => !counts.has(t)), twice };
}
