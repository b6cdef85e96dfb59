import { z } from "zod";
import type { PluginConfigSection } from "../../src/plugin-api/types.js";

/**
 * The Telegram transport's config section, `telegram`. Imports only zod and the plugin API types: the section is
 * known (validated, documented, reported as not available) without loading the transport.
 */

export const telegramSchema = z
  .strictObject({
    botToken: z.string().min(1).optional(),
    allowFrom: z
      .array(z.union([z.number().int(), z.string().regex(/^(\*|-?[0-9]+)$/, 'a numeric user id or "*"')]))
      .default([]),
    requireMention: z.boolean().default(true),
    apiRoot: z
      .url({ protocol: /^https?$/, error: 'an http:// or https:// URL like "https://api.telegram.org"' })
      .default("https://api.telegram.org"),
  })
  .default(() => ({ allowFrom: [], requireMention: true, apiRoot: "https://api.telegram.org" }));

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

/** The `telegram` section; it asks for the transport when a bot token is set, in the file or in `env`. */
export function telegramConfigSection(env: Env): PluginConfigSection<TelegramConfig> {
  return {
    key: "telegram",
    schema: telegramSchema,
    enabled: (config) => telegramTokenSource(config, env) !== undefined,
    describe: {
      botToken: `the token from @BotFather (else env ${TELEGRAM_TOKEN_ENV}); without one Telegram is off`,
      allowFrom: 'Telegram users allowed to talk to the bot: user ids (numbers, or digits in quotes), or "*"',
      requireMention: "in groups, answer only when the bot is mentioned",
      apiRoot: "Bot API root; change it only for a self-hosted Bot API server",
    },
  };
}

/** The start-up warning of a build without the Telegram transport, when a token asks for it. */
export function telegramNotAvailable(config: TelegramConfig, env: Env): string {
  const source = telegramTokenSource(config, env) ?? "telegram.botToken";
  return `${source} is set but the Telegram transport is not available in this build; it is ignored`;
}
