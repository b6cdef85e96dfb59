import { describe, expect, it } from "vitest";
import type { PluginCliCommand } from "../plugin-api/types.js";
import { recordingIO } from "./io.js";
import type { CliPlugin } from "./plugin-commands.js";
import { buildProgram, type CliDeps, CORE_COMMANDS, needsPluginCommands, runCli } from "./program.js";

const command = (name: string, run: PluginCliCommand["run"] = async () => 0): PluginCliCommand => ({
  name,
  description: `the ${name} command`,
  options: [{ flags: "--code <number>", description: "a code" }],
  run,
});

function deps(plugins: readonly CliPlugin[], loaded: { count: number } = { count: 0 }): CliDeps {
  return {
    version: "1.2.3",
    builtinPlugins: async () => [],
    configSections: async () => [],
    terminalChat: async () => {
      throw new Error("not used here");
    },
    cliPlugins: async () => {
      loaded.count += 1;
      return plugins;
    },
  };
}

const noExit = () => {};

describe("the command line", () => {
  it("CORE_COMMANDS names exactly the commands of clawdis itself", () => {
    const program = buildProgram(recordingIO({}), deps([]), noExit);
    expect([...program.commands.map((c) => c.name()), "help"].sort()).toEqual([...CORE_COMMANDS].sort());
  });

  it("lists a plugin's commands after `gateway`, with their options", async () => {
    const io = recordingIO({});
    const plugins = [{ id: "linker", cliCommands: [command("link"), command("unlink")] }];
    expect(await runCli(["--help"], io, deps(plugins))).toBe(0);
    const listed = [...io.out.matchAll(/^ {2}([a-z]+) /gm)].map((match) => match[1]);
    expect(listed).toEqual([
      "gateway",
      "link",
      "unlink",
      "agent",
      "chat",
      "sessions",
      "status",
      "reminders",
      "doctor",
      "init",
      "help",
    ]);
    expect(io.out).toContain("the link command");
    const sub = recordingIO({});
    expect(await runCli(["link", "--help"], sub, deps(plugins))).toBe(0);
    expect(sub.out).toMatch(/--code <number> +a code/);
  });

  it("runs a plugin's command with its options and ends with its exit code", async () => {
    const seen: unknown[] = [];
    const plugins = [
      {
        id: "linker",
        cliCommands: [
          command("link", async (options, context) => {
            seen.push(options, context.stateDir);
            return 3;
          }),
        ],
      },
    ];
    const io = recordingIO({ CLAWDIS_STATE_DIR: "/nonexistent/clawdis-state", HOME: "/nonexistent" });
    expect(await runCli(["link", "--code", "42"], io, deps(plugins))).toBe(3);
    expect(seen).toEqual([{ code: "42" }, "/nonexistent/clawdis-state"]);
  });

  it("refuses a plugin command named like a core command, with the plugin and the name", async () => {
    const io = recordingIO({});
    const plugins = [{ id: "sneaky", cliCommands: [command("status")] }];
    expect(await runCli(["--help"], io, deps(plugins))).toBe(1);
    expect(io.err).toBe(
      `clawdis: Plugin "sneaky": its command "status" is a command of clawdis itself (${CORE_COMMANDS.join(", ")}); give it another name.\n`,
    );
    expect(io.out).toBe("");
  });

  it("does not load the plugins' commands for a core command or the version", async () => {
    const loaded = { count: 0 };
    const io = recordingIO({});
    expect(await runCli(["--version"], io, deps([], loaded))).toBe(0);
    expect(io.out).toBe("1.2.3\n");
    expect(loaded.count).toBe(0);
    expect(await runCli(["login"], recordingIO({}), deps([], loaded))).toBe(2);
    expect(loaded.count).toBe(1);
  });
});

describe("needsPluginCommands", () => {
  it.each([
    [["sessions", "--json"], false],
    [["gateway", "stop"], false],
    [["--version"], false],
    [["-v"], false],
    [["login"], true],
    [["logout", "--help"], true],
    [["help", "login"], true],
    [["help"], true],
    [["--help"], true],
    [["--version", "--help"], true],
    [[], true],
    [["bogus"], true],
  ])("%j: %s", (argv, expected) => {
    expect(needsPluginCommands(argv)).toBe(expected);
  });
});
