import { definePlugin, PLUGIN_API_VERSION, type PluginInstance } from "../../src/plugin-api/index.js";
import { whatsappCliCommands } from "./cli-commands.js";
import { type WhatsappConfig, whatsappConfigSection } from "./config.js";
import type { ConnectionDeps, WhatsappConnection } from "./connection.js";
import { splitForWhatsapp, WHATSAPP_MAX_TEXT } from "./markdown-to-whatsapp.js";

/**
 * WhatsApp, through Baileys (a linked device of the person's own account). The section `whatsapp` turns it on;
 * who may write comes from `inbound.allowFrom`, group rules from `inbound.groupChat`. Baileys is loaded only when
 * the transport starts, so a gateway without WhatsApp does not pay for it. See README.md and docs/whatsapp.md.
 */
export function createWhatsappPlugin(deps: ConnectionDeps = {}) {
  return definePlugin<WhatsappConfig>({
    apiVersion: PLUGIN_API_VERSION,
    id: "whatsapp",
    version: "1.0.0",
    configSection: whatsappConfigSection,
    cliCommands: whatsappCliCommands,
    // `inbound.allowFrom` is read at each message (live); the mention patterns are compiled once per connection.
    reload: { restartOn: ["inbound.groupChat.mentionPatterns"] },
    create(context): PluginInstance {
      let connection: WhatsappConnection | undefined;
      let starting: Promise<void> | undefined;
      let stopped = false;
      context.onEvent((event) => connection?.onGatewayEvent(event));
      const open = async (signal: AbortSignal) => {
        const { WhatsappConnection } = await import("./connection.js");
        if (stopped) return;
        connection = new WhatsappConnection(context, deps);
        await connection.start(signal);
      };
      return {
        // Overlapping starts share one: one socket per account.
        start(signal) {
          starting ??= open(signal);
          return starting;
        },
        async stop() {
          stopped = true;
          await connection?.stop();
        },
        transport: {
          capabilities: { maxTextLength: WHATSAPP_MAX_TEXT, attachments: true },
          authorize: (message) =>
            connection?.authorize(message) ?? {
              allowed: false,
              reason: "the WhatsApp transport is not started",
            },
          send: (message, signal) =>
            connection
              ? connection.send(message, signal)
              : Promise.reject(new Error("WhatsApp is not started")),
          split: (text) => splitForWhatsapp(text, WHATSAPP_MAX_TEXT),
          health: () => connection?.health() ?? { state: "starting", detail: "loading" },
        },
      };
    },
  });
}

export default createWhatsappPlugin();
