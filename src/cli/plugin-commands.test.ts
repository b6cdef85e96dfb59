import { describe, expect, it } from "vitest";
import { isClawdisError } from "../core/errors.js";
import type { PluginCliCommand } from "../plugin-api/types.js";
import { type CliPlugin, pluginCommands } from "./plugin-commands.js";

const command = (name: string): PluginCliCommand => ({ name, description: name, run: async () => 0 });
const plugin = (id: string, ...names: string[]): CliPlugin => ({ id, cliCommands: names.map(command) });
const core = ["gateway", "sessions", "help"];

function refusal(plugins: CliPlugin[]): string {
  try {
    pluginCommands(plugins, core);
  } catch (error) {
    if (isClawdisError(error) && error.code === "PLUGIN_INVALID") return error.message;
    throw error;
  }
  throw new Error("not refused");
}

describe("pluginCommands", () => {
  it("lists every plugin's commands in order, with their plugin", () => {
    const a = plugin("a", "link", "unlink");
    const b = plugin("b", "pair");
    const entries = pluginCommands([a, plugin("none"), b], core);
    expect(entries.map((entry) => [entry.plugin.id, entry.command.name])).toEqual([
      ["a", "link"],
      ["a", "unlink"],
      ["b", "pair"],
    ]);
  });

  it("refuses a name of a core command, help included", () => {
    expect(refusal([plugin("a", "sessions")])).toBe(
      'Plugin "a": its command "sessions" is a command of clawdis itself (gateway, sessions, help); give it another name.',
    );
    expect(refusal([plugin("a", "help")])).toContain('its command "help" is a command of clawdis itself');
  });

  it("refuses a name another plugin took first", () => {
    expect(refusal([plugin("a", "link"), plugin("b", "link")])).toBe(
      'Plugin "b": its command "link" is already the command of plugin "a"; give it another name.',
    );
  });

  it("refuses a name that is not a lowercase word", () => {
    expect(refusal([plugin("a", "Link")])).toContain('"Link" is not a word of lowercase letters');
    expect(refusal([plugin("a", "--link")])).toContain("is not a word");
    expect(refusal([plugin("a", "")])).toContain("is not a word");
  });
});
