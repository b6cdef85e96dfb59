import type { Api } from "grammy";

/** The AbortSignal type grammY's methods declare (from its `abort-controller` types); the same object at runtime. */
export type GrammySignal = NonNullable<Parameters<Api["getMe"]>[0]>;

/** Node's AbortSignal as grammY's parameter type: grammY passes it to fetch unchanged. */
export function grammySignal(signal: AbortSignal): GrammySignal {
  return signal as unknown as GrammySignal;
}
