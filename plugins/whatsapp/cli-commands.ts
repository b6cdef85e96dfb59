import type { PluginCliCommand, PluginCliContext } from "../../src/plugin-api/types.js";
import type { WhatsappConfig } from "./config.js";
import type { WhatsappLoginFlows } from "./login.js";

/**
 * `clawdis login [--pairing-code <E.164>]` and `clawdis logout`: link and unlink the WhatsApp account. Loads
 * nothing until a command runs (the CLI reads this list for `clawdis --help`); the flows and Baileys come then.
 * Both need the state directory to themselves: a running gateway holds the account's one socket.
 */
export function createWhatsappCliCommands(
  flows: () => Promise<WhatsappLoginFlows> = async () => (await import("./login.js")).whatsappLogin,
): readonly PluginCliCommand<WhatsappConfig>[] {
  const exclusive = { gatewayHolds: "holds the WhatsApp link (one socket per account)" };
  const base = (context: PluginCliContext<WhatsappConfig>) => ({
    stateDir: context.stateDir,
    settings: context.config,
    print: context.stderr,
    signal: context.signal,
  });
  return [
    {
      name: "login",
      description: "link WhatsApp: scan the QR code with the phone (or enter a pairing code)",
      options: [
        {
          flags: "--pairing-code <number>",
          description: "link by an 8-character code for this phone number (E.164) instead of a QR code",
        },
      ],
      exclusive,
      async run(options, context) {
        const pairing = options.pairingCode;
        return (await flows()).login(
          typeof pairing === "string" ? { ...base(context), pairingNumber: pairing } : base(context),
        );
      },
    },
    {
      name: "logout",
      description: "unlink WhatsApp and remove its credentials (sessions and transcripts stay)",
      exclusive,
      async run(_options, context) {
        return (await flows()).logout(base(context));
      },
    },
  ];
}

export const whatsappCliCommands = createWhatsappCliCommands();
