import type { PluginConfigSection } from "../../src/plugin-api/types.js";
import type { WebhooksConfig } from "./config-schema.js";

export type { WebhooksConfig } from "./config-schema.js";

/**
 * The webhook plugin's config section, `webhooks`: a map of hook name to hook. Imports only the plugin API types:
 * commands that only read the config (`clawdis doctor`, `status`, `sessions`) load it without the plugin, and its
 * schema (config-schema.ts, zod) is loaded when a config is validated.
 */

export const webhookConfigSection: PluginConfigSection<WebhooksConfig> = {
  key: "webhooks",
  schema: async () => (await import("./config-schema.js")).webhooksSchema,
  enabled: (hooks) => Object.keys(hooks).length > 0,
  describe: {
    "<name>":
      "a hook: POST /hooks/<name> on the gateway hands the request body to a session. Names: 1 to 64 lowercase letters, digits or '-'",
    "<name>.session": "session key the hook's input goes to",
    "<name>.token": "bearer token this hook accepts",
    "<name>.tools":
      'tools the agent may use on this hook\'s input, whatever session it goes to; "*" means every tool but `bash`, which must be named (docs/agent.md, "Who gets tools"). Default none: hook input is untrusted',
  },
};
