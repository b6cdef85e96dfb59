import { GrammyError, HttpError } from "grammy";
import { TELEGRAM_TOKEN_ENV } from "./config.js";

/**
 * What a failed Bot API call means for the transport. Pure: it reads grammY's error classes (a GrammyError is
 * Telegram's own answer, an HttpError a network failure) and decides, it does nothing.
 */
export type TelegramFailure =
  /** 401/404 on the token: a restart cannot help; the user must fix the token. */
  | { kind: "unauthorized"; message: string }
  /** 409: another getUpdates or a webhook runs for this bot. */
  | { kind: "conflict"; message: string }
  /** 429: wait `retryAfterMs` (Telegram's retry_after) before the next call. */
  | { kind: "rate-limit"; message: string; retryAfterMs: number }
  /** 400 "can't parse entities": the formatted text was refused; send it as plain text. */
  | { kind: "bad-entities"; message: string }
  /** Telegram could not be reached, or answered 5xx: back off and try again. */
  | { kind: "network"; message: string }
  /**
   * Anything else Telegram refused. `permanent` for a send (400 "chat not found" or another bad request, 403 the
   * bot was blocked, kicked or may not write there): trying again cannot pass, the reply is given up. Other codes
   * (a 404 for a token Telegram does not know) are the transport's trouble, not the chat's: not permanent.
   */
  | { kind: "refused"; message: string; code: number; permanent: boolean };

/**
 * What to do about a refused token, by where it came from: a fix saved to the config file restarts the transport
 * (its settings changed); the environment is read only when the gateway starts.
 */
export function tokenFix(tokenSource: string | undefined): string {
  return tokenSource === TELEGRAM_TOKEN_ENV
    ? `check ${TELEGRAM_TOKEN_ENV} (from @BotFather), then restart the gateway`
    : "check telegram.botToken (from @BotFather; saving the file is enough)";
}

/** `tokenSource`: where the token came from (telegram.botToken or TELEGRAM_BOT_TOKEN), for the 401 fix. */
export function classifyError(error: unknown, tokenSource?: string): TelegramFailure {
  if (error instanceof GrammyError) {
    const code = error.error_code;
    const what = `Telegram says ${code}: ${error.description}`;
    if (code === 401 || (code === 404 && error.method === "getMe")) {
      return {
        kind: "unauthorized",
        message: `${what} — ${tokenFix(tokenSource)}`,
      };
    }
    if (code === 409) {
      return {
        kind: "conflict",
        message: `${what}; the bot is polled elsewhere (another clawdis, or a webhook). Stop the other one; retrying`,
      };
    }
    if (code === 429) {
      const seconds = error.parameters?.retry_after ?? 1;
      return {
        kind: "rate-limit",
        message: `${what}; retrying in ${seconds}s`,
        retryAfterMs: seconds * 1000,
      };
    }
    if (code === 400 && /can't parse entities|can't find end of the entity/i.test(error.description)) {
      return { kind: "bad-entities", message: what };
    }
    if (code >= 500) return { kind: "network", message: what };
    return { kind: "refused", message: what, code, permanent: code === 400 || code === 403 };
  }
  if (error instanceof HttpError) {
    const cause = error.error instanceof Error ? error.error.message : String(error.error);
    return { kind: "network", message: `Telegram could not be reached: ${cause}` };
  }
  return { kind: "network", message: error instanceof Error ? error.message : String(error) };
}

/** Backoff for polling after `attempt` failures in a row (1-based): 1 s doubling to 60 s, plus up to 25 % jitter. */
export function pollBackoffMs(attempt: number, random: () => number = Math.random): number {
  const base = Math.min(60_000, 1000 * 2 ** Math.max(0, attempt - 1));
  return Math.round(base * (1 + 0.25 * random()));
}
