import type { ServerResponse } from "node:http";
import type { Update } from "grammy/types";
import type { HttpRequest } from "../../src/plugin-api/types.js";
import { sameSecret } from "./same-secret.js";

export interface WebhookHandling {
  /** `telegram.webhookSecret`: a request without it (compared in full, in constant time) is refused with 401. */
  secret: string;
  /** Hands the update in (its files, then `receive`); throws when it was not taken. */
  deliver(update: Update, signal: AbortSignal): Promise<void>;
  /** The update was taken. */
  taken(): void;
  /** It was not: Telegram sends it again. */
  failed(message: string): void;
}

/**
 * Webhook mode: Telegram POSTs one update. 401 without the secret, 400 for a body that is no update, 200 only once
 * the gateway took it, 500 otherwise (so Telegram redelivers it).
 */
export async function handleWebhook(
  req: HttpRequest,
  res: ServerResponse,
  on: WebhookHandling,
): Promise<void> {
  const header = req.headers["x-telegram-bot-api-secret-token"];
  const given = typeof header === "string" ? header : "";
  if (!on.secret || !sameSecret(given, on.secret)) {
    res.statusCode = 401;
    res.end("wrong or missing X-Telegram-Bot-Api-Secret-Token\n");
    return;
  }
  let update: Update;
  try {
    update = JSON.parse(await req.body()) as Update;
    if (typeof update?.update_id !== "number") throw new Error("no update_id");
  } catch {
    res.statusCode = 400;
    res.end("the body must be a Telegram update (JSON with update_id)\n");
    return;
  }
  try {
    await on.deliver(update, req.signal);
    on.taken();
    res.statusCode = 200;
    res.end("ok\n");
  } catch (error) {
    on.failed(error instanceof Error ? error.message : String(error));
    res.statusCode = 500;
    res.end("not taken; send it again\n");
  }
}
