import { z } from "zod";
import type { PluginConfigSection } from "../../src/plugin-api/types.js";

/**
 * The Telegram transport's config section, `telegram`. Imports only zod and the plugin API types: the section is
 * known (validated, documented) without loading the transport and its SDK.
 */

const ALLOW_ENTRY = /^(\*|-?[0-9]+|@[A-Za-z0-9_]{1,32})$/;
const DEFAULT_API_ROOT = "https://api.telegram.org";
const DEFAULT_WEBHOOK_PATH = "/telegram/webhook";
const DEFAULT_MEDIA_MAX_MB = 20;
const DEFAULT_MEDIA_TIMEOUT_SECONDS = 120;

export const telegramSchema = z
  .strictObject({
    botToken: z.string().min(1).optional(),
    allowFrom: z
      .array(
        z.union([
          z.number().int(),
          z.string().regex(ALLOW_ENTRY, 'a numeric user id, an "@username" or "*"'),
        ]),
      )
      .default([]),
    requireMention: z.boolean().default(true),
    apiRoot: z
      .url({ protocol: /^https?$/, error: 'an http:// or https:// URL like "https://api.telegram.org"' })
      .default(DEFAULT_API_ROOT),
    // Telegram posts webhooks only to https:// URLs: an http:// one would fail at setWebhook, or worse, be
    // answered by whatever listens there in the clear.
    webhookUrl: z
      .url({
        protocol: /^https$/,
        error: "the public https:// URL Telegram posts updates to (http:// is refused)",
      })
      .optional(),
    webhookSecret: z
      .string()
      .regex(/^[A-Za-z0-9_-]{1,256}$/, "1-256 characters: letters, digits, _ and -")
      .optional(),
    webhookPath: z
      .string()
      .regex(/^\/[A-Za-z0-9/_-]*$/, 'a path on the gateway, like "/telegram/webhook"')
      .default(DEFAULT_WEBHOOK_PATH),
    mediaMaxMb: z.number().positive().max(2000).default(DEFAULT_MEDIA_MAX_MB),
    mediaTimeoutSeconds: z.number().positive().max(3600).default(DEFAULT_MEDIA_TIMEOUT_SECONDS),
  })
  .refine((c) => c.webhookUrl === undefined || c.webhookSecret !== undefined, {
    path: ["webhookSecret"],
    error:
      "telegram.webhookUrl needs telegram.webhookSecret (Telegram sends it with every update; others cannot)",
  })
  .default(() => ({
    allowFrom: [],
    requireMention: true,
    apiRoot: DEFAULT_API_ROOT,
    webhookPath: DEFAULT_WEBHOOK_PATH,
    mediaMaxMb: DEFAULT_MEDIA_MAX_MB,
    mediaTimeoutSeconds: DEFAULT_MEDIA_TIMEOUT_SECONDS,
  }));

export type TelegramConfig = z.infer<typeof telegramSchema>;

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
  schema: telegramSchema,
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
