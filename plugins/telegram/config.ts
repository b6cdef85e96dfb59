import type { PluginConfigSection } from "../../src/plugin-api/types.js";
import type { TelegramConfig } from "./config-schema.js";

export type { TelegramConfig } from "./config-schema.js";

/**
 * The Telegram transport's config section, `telegram`. Imports only the plugin API types: the section is known
 * (validated, documented) without loading the transport and its SDK; its schema (config-schema.ts, zod) is loaded
 * when a config is validated.
 */

/** The environment variable that stands for `telegram.botToken` when the key is not set. */
export const TELEGRAM_TOKEN_ENV = "TELEGRAM_BOT_TOKEN";

type Env = Readonly<Record<string, string | undefined>>;

/** What asks for Telegram to run: the key, else the environment variable (an empty one is unset); else nothing. */
export function telegramTokenSource(config: TelegramConfig, env: Env): string | undefined {
  if (config.botToken !== undefined) return "telegram.botToken";
  const fromEnv = env[TELEGRAM_TOKEN_ENV];
  return fromEnv !== undefined && fromEnv !== "" ? TELEGRAM_TOKEN_ENV : undefined;
}

/** The bot token: `telegram.botToken`, else a non-empty `TELEGRAM_BOT_TOKEN`. */
export function telegramToken(config: TelegramConfig, env: Env): string | undefined {
  if (config.botToken !== undefined) return config.botToken;
  const fromEnv = env[TELEGRAM_TOKEN_ENV];
  return fromEnv !== undefined && fromEnv !== "" ? fromEnv : undefined;
}

let boundEnv: Env = process.env;

/** The environment the section's `enabled` and the plugin's token read (the one the last command handed in). */
export function telegramEnv(): Env {
  return boundEnv;
}

/**
 * The `telegram` section, one object (the built-in plugin declares this same one); it asks for the transport
 * when a bot token is set, in the file or in the environment `telegramConfigSection` was last given.
 */
export const TELEGRAM_SECTION: PluginConfigSection<TelegramConfig> = {
  key: "telegram",
  schema: async () => (await import("./config-schema.js")).telegramSchema,
  enabled: (config) => telegramTokenSource(config, boundEnv) !== undefined,
  describe: {
    botToken: `the token from @BotFather (else env ${TELEGRAM_TOKEN_ENV}); without one Telegram is off`,
    allowFrom:
      'who may talk to the bot: user ids (numbers, or digits in quotes), "@usernames", group chat ids, or "*"; empty: nobody',
    requireMention: "in groups, answer only when the bot is mentioned, addressed with /cmd@bot or replied to",
    apiRoot: "Bot API root; change it only for a self-hosted Bot API server",
    webhookUrl: "the public URL Telegram posts updates to (webhook mode); unset: long polling",
    webhookSecret: "the secret Telegram sends with every webhook update; required with webhookUrl",
    webhookPath: "the gateway's path that receives the webhook (behind your reverse proxy)",
    mediaMaxMb: "photos, documents, voice and audio larger than this are not downloaded",
    mediaTimeoutSeconds:
      "a download is given up after this many seconds, or when slower than 4 KB/s for 10 s (the agent is told it timed out)",
  },
};

/** The `telegram` section, reading the bot token variable from `env`. */
export function telegramConfigSection(env: Env): PluginConfigSection<TelegramConfig> {
  boundEnv = env;
  return TELEGRAM_SECTION;
}
