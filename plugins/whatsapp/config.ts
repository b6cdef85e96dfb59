import type { PluginConfigSection } from "../../src/plugin-api/types.js";
import type { WhatsappConfig } from "./config-schema.js";

export type { WhatsappConfig } from "./config-schema.js";

/**
 * The WhatsApp transport's config section, `whatsapp`. Imports only the plugin API types: the section is known
 * (validated, documented) without loading the transport; its schema (config-schema.ts, zod) is loaded when a config
 * is validated. Who may write (`inbound.allowFrom`) and group
 * rules (`inbound.groupChat.*`) are core keys the transport reads from the gateway config.
 */

export const whatsappConfigSection: PluginConfigSection<WhatsappConfig> = {
  key: "whatsapp",
  schema: async () => (await import("./config-schema.js")).whatsappSchema,
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
