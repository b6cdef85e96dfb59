import { definePlugin, PLUGIN_API_VERSION } from "../../src/plugin-api/index.js";
import {
  TELEGRAM_SECTION,
  type TelegramConfig,
  telegramEnv,
  telegramToken,
  telegramTokenSource,
} from "./config.js";

/**
 * Telegram: a bot (from @BotFather) on grammY, by long polling or a webhook on the gateway's HTTP server. Its
 * settings are the `telegram` section (config.ts); the host creates it only when a bot token is set. grammY and
 * the runtime are loaded only then (in `create`), so a gateway without Telegram does not pay for them. See
 * README.md for its invariants and docs/telegram.md for the user's side.
 */
export default definePlugin<TelegramConfig>({
  apiVersion: PLUGIN_API_VERSION,
  id: "telegram",
  version: "1.0.0",
  // Replies go out through confirmingFetch (telegram-api.ts): the gateway runs the send thread for them.
  sendThread: true,
  configSection: TELEGRAM_SECTION,
  // Read at each message: an edit of who may talk or of the mention rule needs no restart.
  reload: { live: ["allowFrom", "requireMention"] },
  async create(context) {
    const token = telegramToken(context.config, telegramEnv());
    if (token === undefined) {
      throw Object.assign(new Error("no Telegram bot token: set telegram.botToken or TELEGRAM_BOT_TOKEN"), {
        fatal: true,
      });
    }
    const [{ TelegramRuntime }, { allowFromWarnings, logOwner }] = await Promise.all([
      import("./telegram-runtime.js"),
      import("./allow-list.js"),
    ]);
    return {
      ...new TelegramRuntime(context, {
        token,
        tokenSource: telegramTokenSource(context.config, telegramEnv()),
      }).instance(),
      // As at start: an allowlist edited to empty or to "*" is said again, and so is who the owner is.
      configChanged: (keys) => {
        const allowFrom = keys.includes("telegram.allowFrom");
        if (allowFrom)
          for (const line of allowFromWarnings(context.config.allowFrom)) context.logger.warn(line);
        if (allowFrom || keys.some((key) => key.startsWith("inbound.owner"))) logOwner(context);
      },
    };
  },
});
