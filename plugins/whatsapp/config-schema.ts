import { z } from "zod";

/**
 * The schema of the WhatsApp transport's config section, `whatsapp` (config.ts declares the section): loaded only
 * when a config is validated, never on the gateway's way to listening.
 */

export const whatsappSchema = z
  .strictObject({
    enabled: z.boolean().default(false),
    socketUrl: z
      .url({ protocol: /^wss?$/, error: 'a ws:// or wss:// URL like "ws://127.0.0.1:8080/ws/chat"' })
      .optional(),
    mediaMaxMb: z.number().positive().max(2048).default(20),
    mediaTimeoutSeconds: z.number().positive().max(3600).default(120),
  })
  .default(() => ({ enabled: false, mediaMaxMb: 20, mediaTimeoutSeconds: 120 }));

export type WhatsappConfig = z.infer<typeof whatsappSchema>;
