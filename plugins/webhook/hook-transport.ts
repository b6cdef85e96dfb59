import type { PluginContext, Transport } from "../../src/plugin-api/index.js";
import type { WebhooksConfig } from "./config.js";
import { hookSenderId, WEBHOOK_CHANNEL } from "./handle-hook.js";

/**
 * The webhook channel as a transport. A hook caller is gone by the time the reply exists (or got it through
 * `?wait=1`), so `send` delivers nowhere: it logs and resolves. The reply stays in the transcript and the events.
 * `authorize` allows exactly the senders `hook:<name>` of hooks configured right now.
 */
export function hookTransport(context: Pick<PluginContext<WebhooksConfig>, "config" | "logger">): Transport {
  return {
    capabilities: { maxTextLength: 1_000_000 },
    authorize(message) {
      const configured = Object.keys(context.config);
      if (
        message.channel === WEBHOOK_CHANNEL &&
        configured.some((name) => message.senderId === hookSenderId(name))
      ) {
        return { allowed: true };
      }
      return { allowed: false, reason: `"${message.senderId}" is not a configured webhook` };
    },
    async send(message, signal) {
      signal.throwIfAborted();
      context.logger.info("webhook reply kept in the transcript (a webhook has no chat to deliver to)", {
        chatId: message.chatId,
        kind: message.kind,
        chars: message.text.length,
      });
      return {};
    },
    health() {
      const names = Object.keys(context.config);
      return {
        state: "ok",
        detail: names.length === 0 ? "no webhooks configured" : `hooks: ${names.join(", ")}`,
      };
    },
  };
}
