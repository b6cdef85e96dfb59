import { z } from "zod";

/**
 * The schema of the Telegram transport's config section, `telegram` (config.ts declares the section): loaded only
 * when a config is validated, never on the gateway's way to listening.
 */

const ALLOW_ENTRY = /^(\*|-?[0-9]+|@[A-Za-z0-9_]{1,32})$/;
export const DEFAULT_API_ROOT = "https://api.telegram.org";
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
