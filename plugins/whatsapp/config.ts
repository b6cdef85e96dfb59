import { z } from "zod";
import type { PluginConfigSection } from "../../src/plugin-api/types.js";

/**
 * The WhatsApp transport's config section, `whatsapp`. Imports only zod and the plugin API types: the section is
 * known (validated, documented) without loading the transport. Who may write (`inbound.allowFrom`) and group
 * rules (`inbound.groupChat.*`) are core keys the transport reads from the gateway config.
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

export const whatsappConfigSection: PluginConfigSection<WhatsappConfig> = {
  key: "whatsapp",
  schema: whatsappSchema,
  enabled: (config) => config.enabled,
  describe: {
    enabled: "link WhatsApp; run `clawdis login` once first (credentials in `<state>/credentials/whatsapp/`)",
    socketUrl:
      "where the WhatsApp socket connects instead of WhatsApp's own server; for tests against a loopback server",
    mediaMaxMb:
      "inbound media larger than this many MB is not downloaded (the model is told it was too large)",
    mediaTimeoutSeconds:
      "a download is given up after this many seconds, or when slower than 4 KB/s for 10 s (the model is told)",
  },
};
