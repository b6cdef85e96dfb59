import type { ConfigSectionsSource } from "../core/config-sections.js";
import type { PluginCliCommand, PluginDefinition } from "../plugin-api/types.js";

/** A plugin as the CLI knows it: its declarations alone (id, settings, commands), never its runtime. */
export type CliPlugin = Pick<PluginDefinition, "id" | "configSchema" | "configSection" | "cliCommands">;

/** A plugin command as the CLI registers it: whose it is, and the command. */
export interface PluginCommandEntry {
  plugin: CliPlugin;
  command: PluginCliCommand;
}

/** What running a plugin command needs from the CLI. */
export interface PluginCommandDeps {
  configSections: ConfigSectionsSource;
  now?: () => number;
}
