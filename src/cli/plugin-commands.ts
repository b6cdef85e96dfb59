import type { Command } from "commander";
import { ClawdisError } from "../core/errors.js";
import type { CliIO } from "./io.js";
import type { CliPlugin, PluginCommandDeps, PluginCommandEntry } from "./plugin-command-types.js";

/**
 * The commands plugins add to the command line (`PluginDefinition.cliCommands`), e.g. WhatsApp's `clawdis login`.
 * The CLI knows a plugin here by its declarations alone (id, settings, commands), never by its runtime; what runs
 * a command (run-plugin-command.ts) is loaded when one runs.
 */

export type { CliPlugin, PluginCommandEntry };

const COMMAND_NAME = /^[a-z][a-z0-9-]{0,63}$/;

/**
 * The commands of `plugins`, in their order, checked: a name that is not a word of lowercase letters, digits and
 * dashes, or that is a core command's (`coreCommands`) or an earlier plugin's, is refused (ClawdisError
 * PLUGIN_INVALID naming the plugin and the command). Pure.
 */
export function pluginCommands(
  plugins: readonly CliPlugin[],
  coreCommands: readonly string[],
): PluginCommandEntry[] {
  const taken = new Map<string, string>();
  const entries: PluginCommandEntry[] = [];
  for (const plugin of plugins) {
    for (const command of plugin.cliCommands ?? []) {
      const refuse = (problem: string) =>
        new ClawdisError(
          "PLUGIN_INVALID",
          `Plugin "${plugin.id}": its command ${JSON.stringify(command.name)} ${problem}.`,
        );
      if (typeof command.name !== "string" || !COMMAND_NAME.test(command.name)) {
        throw refuse("is not a word of lowercase letters, digits and dashes starting with a letter");
      }
      if (coreCommands.includes(command.name)) {
        throw refuse(`is a command of clawdis itself (${coreCommands.join(", ")}); give it another name`);
      }
      const owner = taken.get(command.name);
      if (owner !== undefined)
        throw refuse(`is already the command of plugin "${owner}"; give it another name`);
      taken.set(command.name, plugin.id);
      entries.push({ plugin, command });
    }
  }
  return entries;
}

/** Adds `entries` to `program`; each runs through `runPluginCommand` and hands its exit code to `setExit`. */
export function registerPluginCommands(
  program: Command,
  entries: readonly PluginCommandEntry[],
  io: CliIO,
  deps: PluginCommandDeps,
  setExit: (code: number) => void,
): void {
  for (const entry of entries) {
    const sub = program.command(entry.command.name).description(entry.command.description);
    for (const option of entry.command.options ?? []) sub.option(option.flags, option.description);
    sub.action(async (options: Record<string, string | boolean | undefined>) => {
      setExit(await (await import("./run-plugin-command.js")).runPluginCommand(entry, options, io, deps));
    });
  }
}
