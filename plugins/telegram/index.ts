import { definePlugin, PLUGIN_API_VERSION } from "../../src/plugin-api/index.js";
import { TELEGRAM_SECTION, type TelegramConfig, telegramEnv, telegramToken } from "./config.js";

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
  configSection: TELEGRAM_SECTION,
  async create(context) {
    const token = telegramToken(context.config, telegramEnv());
    if (token === undefined) {
      throw Object.assign(new Error("no Telegram bot token: set telegram.botToken or TELEGRAM_BOT_TOKEN"), {
        fatal: true,
      });
    }
    const { TelegramRuntime } = await import("./telegram-runtime.js");
    return new TelegramRuntime(context, { token }).instance();
  },
});
