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

/**
 * Splits the tokens delivered twice by what the Bot API knew at the kill. `takenAt`: when the fake took (and
 * answered) the first copy of each token; `kills`: when each gateway was killed; `readyAt`: when each gateway was
 * ready (all on one clock). A first copy taken after its sender's kill and before the next gateway was up was a
 * request the dead gateway had sent, which the Bot API took once it was dead: no gateway can know whether such a
 * request went through ("taken after the kill"). Every other one was answered before the kill, so the kill fell
 * in the window between the Bot API's answer and the gateway's record of it ("answered before the kill"). Pure.
 */
export function splitTwice(
  twice: Record<string, number>,
  takenAt: (token: string) => number | undefined,
  kills: readonly number[],
  readyAt: readonly number[],
): { answeredBeforeKill: string[]; takenAfterKill: string[] } {
  const answeredBeforeKill: string[] = [];
  const takenAfterKill: string[] = [];
  for (const token of Object.keys(twice)) {
    const at = takenAt(token);
    const before = at === undefined ? [] : kills.filter((k) => k <= at);
    // The last kill before the fake took it, with no gateway up since then: its sender was dead.
    const kill = before.length > 0 ? Math.max(...before) : undefined;
    const sinceKill = at !== undefined && kill !== undefined && !readyAt.some((r) => r > kill && r <= at);
    (sinceKill ? takenAfterKill : answeredBeforeKill).push(token);
  }
  return { answeredBeforeKill, takenAfterKill };
}

/** When the fake took the first message that carries `token` (undefined if none did). */
export function firstTaken(tg: FakeTelegram, token: string): number | undefined {
  return tg.sent.find((m) => Array.from(m.text.matchAll(TOKEN), (t) => t[0]).includes(token))?.takenAt;
}
