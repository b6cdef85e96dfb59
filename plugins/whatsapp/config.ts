import { z } from "zod";
import type { PluginConfigSection } from "../../src/plugin-api/types.js";

/**
 * The WhatsApp transport's config section, `whatsapp`. Imports only zod and the plugin API types: the section is
 * known (validated, documented, reported as not available) without loading the transport.
 */

export const whatsappSchema = z
  .strictObject({
    enabled: z.boolean().default(false),
  })
  .default(() => ({ enabled: false }));

export type WhatsappConfig = z.infer<typeof whatsappSchema>;

export const whatsappConfigSection: PluginConfigSection<WhatsappConfig> = {
  key: "whatsapp",
  schema: whatsappSchema,
  enabled: (config) => config.enabled,
  describe: {
    enabled: "link WhatsApp; run `clawdis login` once first (credentials in `<state>/credentials/whatsapp/`)",
  },
};

/** The start-up warning of a build without the WhatsApp transport, when the section asks for it. */
export function whatsappNotAvailable(): string {
  return "whatsapp.enabled is true but the WhatsApp transport is not available in this build; it is ignored";
}
