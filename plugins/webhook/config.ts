import { z } from "zod";
import type { PluginConfigSection } from "../../src/plugin-api/types.js";

/**
 * The webhook plugin's config section, `webhooks`: a map of hook name to hook. Imports only zod and the plugin API
 * types, so commands that only read the config (`clawdis doctor`, `status`, `sessions`) load it without the plugin.
 */

export const hookSchema = z.strictObject({
  /** Session key the hook's input goes to; default the primary session. */
  session: z.string().min(1).optional(),
  /** Bearer token for this hook; default the gateway token. */
  token: z.string().min(8).optional(),
  /** Tools the agent may use on this hook's input (names, or "*"); default none: hook input is untrusted. */
  tools: z.array(z.string().min(1)).default([]),
});

export const webhooksSchema = z
  .record(
    z.string().regex(/^[a-z0-9-]{1,64}$/, "a name of 1 to 64 lowercase letters, digits or '-'"),
    hookSchema,
  )
  .default({});

export type WebhooksConfig = z.infer<typeof webhooksSchema>;

export const webhookConfigSection: PluginConfigSection<WebhooksConfig> = {
  key: "webhooks",
  schema: webhooksSchema,
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
