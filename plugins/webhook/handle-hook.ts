import { randomUUID } from "node:crypto";
import type { ServerResponse } from "node:http";
import {
  type HttpHandler,
  type HttpRequest,
  type InboundMessage,
  outcomeBody,
  type PluginContext,
  type ReceiveResult,
} from "../../src/plugin-api/index.js";
import type { WebhooksConfig } from "./config.js";
import { parseHookBody } from "./parse-hook-body.js";
import { bearerToken, resolveHook, tokensEqual } from "./resolve-hook.js";

export const WEBHOOK_CHANNEL = "webhook";

/** The sender (and chat) id of a hook's input: `hook:<name>`. */
export function hookSenderId(name: string): string {
  return `hook:${name}`;
}

function reply(
  res: ServerResponse,
  status: number,
  body: unknown,
  headers: Record<string, string> = {},
): void {
  if (res.headersSent) {
    res.end();
    return;
  }
  res.writeHead(status, {
    "content-type": "application/json; charset=utf-8",
    "cache-control": "no-store",
    ...headers,
  });
  res.end(`${JSON.stringify(body)}\n`);
}

function header(req: HttpRequest, name: string): string | undefined {
  const value = req.headers[name];
  return Array.isArray(value) ? value[0] : value;
}

/**
 * `POST /hooks/:name`. Registered without the server's token check: each hook checks its own token.
 * Order: unknown hook 404, wrong or missing bearer token 401, bad body 400/413, then the gateway decides:
 * accepted 202 (or 200 with the outcome under `?wait=1`), duplicate 409, denied 403, gateway unavailable 503.
 * Input is handed over as automated: it waits for its own turn and never joins a running one.
 */
export function hookHandler(
  context: Pick<
    PluginContext<WebhooksConfig>,
    "config" | "gatewayConfig" | "gatewayToken" | "receive" | "logger"
  >,
): HttpHandler {
  return async (req, res) => {
    const name = req.params.name ?? "";
    const hook = resolveHook(context.config, context.gatewayConfig, context.gatewayToken, name);
    if (!hook) {
      reply(res, 404, {
        error: "not-found",
        message: `no webhook named "${name}": add it under "webhooks" in clawdis.json`,
      });
      return;
    }
    if (!tokensEqual(hook.token, bearerToken(req.headers.authorization))) {
      reply(
        res,
        401,
        {
          error: "unauthorized",
          message: `send 'Authorization: Bearer <token>': webhooks.${name}.token, or the gateway token when it has none`,
        },
        { "www-authenticate": 'Bearer realm="clawdis"' },
      );
      return;
    }

    let raw: string;
    try {
      raw = await req.body();
    } catch (error) {
      reply(res, 413, {
        error: "too-large",
        message: error instanceof Error ? error.message : String(error),
      });
      return;
    }
    const body = parseHookBody(raw, header(req, "content-type"));
    if (!body.ok) {
      reply(res, 400, { error: "bad-request", message: body.message });
      return;
    }

    const message: InboundMessage = {
      channel: WEBHOOK_CHANNEL,
      chatId: hookSenderId(name),
      chatType: "direct",
      senderId: hookSenderId(name),
      senderName: name,
      messageId: body.messageId ?? header(req, "idempotency-key") ?? randomUUID(),
      text: body.text,
      receivedAt: Date.now(),
      automated: true,
      allowedTools: hook.tools,
      sessionKey: hook.sessionKey,
    };

    let result: ReceiveResult;
    try {
      result = await context.receive(message);
    } catch (error) {
      context.logger.warn("webhook input not accepted: gateway unavailable", {
        hook: name,
        error: error instanceof Error ? error.message : String(error),
      });
      reply(res, 503, {
        error: "unavailable",
        message: "the gateway is not taking input right now; retry later",
      });
      return;
    }

    if (result.status === "duplicate") {
      reply(res, 409, {
        error: "duplicate",
        message: `messageId "${message.messageId}" was already received`,
      });
      return;
    }
    if (result.status === "denied") {
      reply(res, 403, { error: "denied", message: result.reason });
      return;
    }
    const wait = ["1", "true", "yes"].includes(req.query.get("wait") ?? "");
    context.logger.info("webhook input accepted", {
      hook: name,
      journalId: result.journalId,
      sessionKey: hook.sessionKey,
      chars: message.text.length,
      wait,
    });
    if (!wait) {
      // The turn runs on; its outcome is in the transcript and the events. Nobody awaits `done` here.
      result.done.catch(() => {});
      reply(res, 202, { status: "accepted", journalId: result.journalId });
      return;
    }
    const outcome = await result.done;
    reply(res, 200, outcomeBody(outcome));
  };
}
