import { definePlugin, PLUGIN_API_VERSION } from "../../src/plugin-api/index.js";
import { webhookConfigSection } from "./config.js";
import { hookHandler } from "./handle-hook.js";
import { hookTransport } from "./hook-transport.js";

/**
 * Webhooks: `POST /hooks/<name>` hands text from scripts and services (CI, monitoring, cron) to the agent as
 * automated input. Hooks are configured in the plugin's own config section, `webhooks` (config.ts), which is its
 * `context.config`; see docs/webhooks.md.
 */
export default definePlugin({
  apiVersion: PLUGIN_API_VERSION,
  id: "webhook",
  version: "1.0.0",
  configSection: webhookConfigSection,
  // Every hook is looked up in `context.config` at each request: adding, changing or removing one is live.
  reload: { live: ["*"] },
  create(context) {
    context.http.route("POST", "/hooks/:name", hookHandler(context), { auth: false });
    return { transport: hookTransport(context) };
  },
});
