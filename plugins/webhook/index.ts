import { definePlugin, PLUGIN_API_VERSION } from "../../src/plugin-api/index.js";
import { hookHandler } from "./handle-hook.js";
import { hookTransport } from "./hook-transport.js";

/**
 * Webhooks: `POST /hooks/<name>` hands text from scripts and services (CI, monitoring, cron) to the agent as
 * automated input. Hooks are configured under `webhooks` in clawdis.json; see docs/webhooks.md.
 */
export default definePlugin({
  apiVersion: PLUGIN_API_VERSION,
  id: "webhook",
  version: "1.0.0",
  create(context) {
    context.http.route("POST", "/hooks/:name", hookHandler(context), { auth: false });
    return { transport: hookTransport(context) };
  },
});
