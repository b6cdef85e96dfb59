import { readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { processIO } from "./cli/io.js";
import type { CliPlugin } from "./cli/plugin-commands.js";
import { runCli } from "./cli/program.js";
import type { ConfigSectionEntry } from "./core/config-sections.js";
import type { Env } from "./core/paths.js";
import type { PluginDefinition } from "./plugin-api/types.js";

/**
 * The composition root: the only module that knows both the core and the built-in plugins. Plugins are imported
 * only when a command needs them, so `clawdis --version` and `clawdis sessions` start fast.
 */
export function packageVersion(): string {
  let dir = dirname(fileURLToPath(import.meta.url));
  for (;;) {
    try {
      const pkg = JSON.parse(readFileSync(join(dir, "package.json"), "utf8")) as {
        name?: string;
        version?: string;
      };
      if (pkg.name === "clawdis" && pkg.version) return pkg.version;
    } catch {
      // Keep walking up.
    }
    const parent = dirname(dir);
    if (parent === dir) return "0.0.0";
    dir = parent;
  }
}

/** The plugins every gateway runs (their runtime: SDKs and all). */
export async function builtinPlugins(): Promise<PluginDefinition[]> {
  return [
    (await import("../plugins/webchat/index.js")).default,
    (await import("../plugins/webhook/index.js")).default,
    (await import("../plugins/telegram/index.js")).default,
    (await import("../plugins/whatsapp/index.js")).default,
  ];
}

/**
 * The config sections this build knows without loading a plugin's runtime: those of the built-in plugins
 * (`webhooks`), and those of the transports registered without a plugin to run them (`telegram`, `whatsapp`,
 * built in later issues), which warn when they ask for their transport. Loads only `plugins/<id>/config.ts`
 * modules and their schemas (`config-schema.ts`, zod). Every built-in plugin's `configSection` must be here
 * (main.test.ts).
 */
export async function builtinConfigSections(env: Env): Promise<readonly ConfigSectionEntry[]> {
  const [{ sectionEntry }, { withSchemas }, webhook, telegram, whatsapp] = await Promise.all([
    import("./core/config-sections.js"),
    import("./core/section-schema.js"),
    import("../plugins/webhook/config.js"),
    import("../plugins/telegram/config.js"),
    import("../plugins/whatsapp/config.js"),
  ]);
  // Their schemas are loaded functions (zod stays off the gateway's start): loaded here, for validation.
  return withSchemas([
    sectionEntry("webhook", webhook.webhookConfigSection),
    sectionEntry("telegram", telegram.telegramConfigSection(env)),
    sectionEntry("whatsapp", whatsapp.whatsappConfigSection),
  ]);
}

/**
 * The built-in plugins that add commands to the command line (`clawdis login` / `logout`), as the CLI knows them
 * without their runtime: id, config section and commands. Loads only their `config.ts` and `cli-commands.ts`.
 * Every built-in plugin's `cliCommands` must be here (main.test.ts).
 */
export async function builtinCliPlugins(): Promise<CliPlugin[]> {
  const [config, cli] = await Promise.all([
    import("../plugins/whatsapp/config.js"),
    import("../plugins/whatsapp/cli-commands.js"),
  ]);
  return [
    { id: "whatsapp", configSection: config.whatsappConfigSection, cliCommands: cli.whatsappCliCommands },
  ];
}

/**
 * `bundleId`: the id of the start-up bundle running this (bin/clawdis.js hands it in), the fingerprint of every
 * schema for the config cache; undefined when the compiled modules run (no cache).
 */
export async function main(argv: string[], bundleId?: string): Promise<number> {
  return runCli(argv, processIO(), {
    version: packageVersion(),
    builtinPlugins,
    configSections: builtinConfigSections,
    ...(bundleId === undefined ? {} : { configFingerprint: `bundle:${bundleId}` }),
    terminalChat: async () => (await import("../plugins/terminal/index.js")).runTerminalChat,
    cliPlugins: builtinCliPlugins,
  });
}
