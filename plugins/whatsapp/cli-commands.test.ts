import { describe, expect, it } from "vitest";
import type { PluginCliContext } from "../../src/plugin-api/index.js";
import { createWhatsappCliCommands } from "./cli-commands.js";
import type { WhatsappConfig } from "./config.js";
import type { LoginFlowOptions, WhatsappLoginFlows } from "./login.js";

const settings: WhatsappConfig = { enabled: true, mediaMaxMb: 20, mediaTimeoutSeconds: 120 };

function recording(result: number) {
  const calls: [string, LoginFlowOptions][] = [];
  const flows: WhatsappLoginFlows = {
    login: async (options) => {
      calls.push(["login", options]);
      return result;
    },
    logout: async (options) => {
      calls.push(["logout", options]);
      return result;
    },
  };
  let loads = 0;
  const commands = createWhatsappCliCommands(async () => {
    loads += 1;
    return flows;
  });
  return { calls, commands, loads: () => loads };
}

const signal = new AbortController().signal;
const said: string[] = [];
const context: PluginCliContext<WhatsappConfig> = {
  config: settings,
  gatewayConfig: {
    inbound: {
      allowFrom: [],
      owner: {},
      groupChat: { mentionPatterns: [] },
      reply: { session: { scope: "per-sender", mainKey: "main" }, agent: { contextTokens: 1000 } },
    },
  },
  stateDir: "/state",
  env: {},
  stdout: () => {},
  stderr: (text) => said.push(text),
  signal,
};

describe("clawdis login / logout (the WhatsApp plugin's commands)", () => {
  it("declares login with --pairing-code and logout, both needing the state directory to themselves", () => {
    const { commands, loads } = recording(0);
    expect(
      commands.map((command) => [command.name, command.options?.map((option) => option.flags) ?? []]),
    ).toEqual([
      ["login", ["--pairing-code <number>"]],
      ["logout", []],
    ]);
    for (const command of commands) {
      expect(command.exclusive?.gatewayHolds).toBe("holds the WhatsApp link (one socket per account)");
    }
    // Declaring loads no flow (no Baileys).
    expect(loads()).toBe(0);
  });

  it("hands the flows the state directory, the settings, the pairing number and the terminal, and their exit code back", async () => {
    const { calls, commands } = recording(2);
    const [login, logout] = commands;
    expect(await login?.run({ pairingCode: "+4915112345678" }, context)).toBe(2);
    expect(await login?.run({}, context)).toBe(2);
    expect(await logout?.run({}, context)).toBe(2);
    expect(
      calls.map(([name, options]) => [name, options.stateDir, options.settings, options.pairingNumber]),
    ).toEqual([
      ["login", "/state", settings, "+4915112345678"],
      ["login", "/state", settings, undefined],
      ["logout", "/state", settings, undefined],
    ]);
    expect(calls.every(([, options]) => options.signal === signal)).toBe(true);
    calls[0]?.[1].print("scan this\n");
    expect(said).toEqual(["scan this\n"]);
  });
});
