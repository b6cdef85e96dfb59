import { mkdtemp, rm, stat, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { z } from "zod";
import { isClawdisError } from "../core/errors.js";
import { builtinConfigSections } from "../main.js";
import type { PluginCliCommand, PluginCliContext } from "../plugin-api/types.js";
import { StateLock, stateLockPath } from "../runtime/state-lock.js";
import { recordingIO } from "./io.js";
import type { CliPlugin, PluginCommandEntry } from "./plugin-commands.js";
import { runPluginCommand } from "./run-plugin-command.js";

let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), "clawdis-plugin-command-"));
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

interface Call {
  options: Readonly<Record<string, string | boolean | undefined>>;
  context: PluginCliContext;
  lockHeld: boolean;
}

/**
 * A command of a plugin `link` (the WhatsApp plugin's own commands are tested in plugins/whatsapp/) that records
 * how it was called: its own settings section `link`, and the state directory to itself unless `shared`.
 */
function recordingCommand(result = 0, shared = false) {
  const calls: Call[] = [];
  const command: PluginCliCommand = {
    name: "link",
    description: "link the account",
    ...(shared ? {} : { exclusive: { gatewayHolds: "holds the link's one socket" } }),
    async run(options, context) {
      const lockHeld = await stat(stateLockPath(dir)).then(
        () => true,
        () => false,
      );
      calls.push({ options, context, lockHeld });
      return result;
    },
  };
  const plugin: CliPlugin = {
    id: "linker",
    configSection: {
      key: "link",
      schema: z.strictObject({ url: z.string().default("ws://default") }).default({ url: "ws://default" }),
      describe: { url: "where to link" },
    },
    cliCommands: [command],
  };
  const entry: PluginCommandEntry = { plugin, command };
  const deps = {
    configSections: async (env: Readonly<Record<string, string | undefined>>) => [
      ...(await builtinConfigSections(env)),
      { owner: "linker", section: plugin.configSection as NonNullable<CliPlugin["configSection"]> },
    ],
  };
  return { calls, entry, deps };
}

const env = () => ({ CLAWDIS_STATE_DIR: dir, HOME: dir });
const signal = new AbortController().signal;

describe("a plugin's command (clawdis login / logout)", () => {
  it("refuses while a gateway owns the state directory, saying what the gateway holds, without running", async () => {
    const held = await StateLock.tryAcquire(dir, { kind: "gateway", port: 18789, now: Date.now() });
    if (!held.ok) throw new Error("the test could not take the lock");
    try {
      const { calls, entry, deps } = recordingCommand();
      const io = recordingIO(env());
      expect(await runPluginCommand(entry, {}, io, deps, signal)).toBe(1);
      expect(io.err).toMatch(
        /^clawdis: a gateway \(pid \d+, port 18789\) runs on .* and holds the link's one socket; stop it first, then run `clawdis link`\n$/,
      );
      expect(calls).toEqual([]);
    } finally {
      await held.lock.release();
    }
  });

  it("refuses while another command uses the state directory", async () => {
    const held = await StateLock.tryAcquire(dir, { kind: "agent", now: Date.now() });
    if (!held.ok) throw new Error("the test could not take the lock");
    try {
      const { calls, entry, deps } = recordingCommand();
      const io = recordingIO(env());
      expect(await runPluginCommand(entry, {}, io, deps, signal)).toBe(1);
      expect(io.err).toMatch(/uses .*; try again when it is done/);
      expect(calls).toEqual([]);
    } finally {
      await held.lock.release();
    }
  });

  it("hands the command its options, its settings, the state directory and the core config, holding the directory meanwhile", async () => {
    await writeFile(
      join(dir, "clawdis.json"),
      '{ link: { url: "ws://127.0.0.1:9/ws" }, inbound: { allowFrom: ["*"] } }',
    );
    const { calls, entry, deps } = recordingCommand(0);
    const io = recordingIO(env());
    expect(await runPluginCommand(entry, { pairingCode: "+4915112345678" }, io, deps, signal)).toBe(0);
    expect(calls).toHaveLength(1);
    const [call] = calls as [Call];
    expect(call.lockHeld).toBe(true);
    expect(call.options).toEqual({ pairingCode: "+4915112345678" });
    expect(call.context.config).toEqual({ url: "ws://127.0.0.1:9/ws" });
    expect(call.context.stateDir).toBe(dir);
    expect(call.context.gatewayConfig.inbound.allowFrom).toEqual(["*"]);
    expect(call.context.signal).toBe(signal);
    call.context.stderr("said\n");
    call.context.stdout("data\n");
    expect([io.err, io.out]).toEqual(["said\n", "data\n"]);
    // Released afterwards: a gateway can start.
    await expect(stat(stateLockPath(dir))).rejects.toThrow(/ENOENT/);
  });

  it("does not take the state directory for a command that does not ask for it", async () => {
    const held = await StateLock.tryAcquire(dir, { kind: "gateway", port: 18789, now: Date.now() });
    if (!held.ok) throw new Error("the test could not take the lock");
    try {
      const { calls, entry, deps } = recordingCommand(0, true);
      expect(await runPluginCommand(entry, {}, recordingIO(env()), deps, signal)).toBe(0);
      expect(calls.map((call) => call.context.config)).toEqual([{ url: "ws://default" }]);
    } finally {
      await held.lock.release();
    }
  });

  it("passes the command's exit code on, and releases the directory when the command throws", async () => {
    const { entry, deps } = recordingCommand(1);
    expect(await runPluginCommand(entry, {}, recordingIO(env()), deps, signal)).toBe(1);
    const throwing: PluginCommandEntry = {
      ...entry,
      command: {
        ...entry.command,
        run: async () => {
          throw new Error("boom");
        },
      },
    };
    await expect(runPluginCommand(throwing, {}, recordingIO(env()), deps, signal)).rejects.toThrow("boom");
    await expect(stat(stateLockPath(dir))).rejects.toThrow(/ENOENT/);
  });

  it("stops at a bad config (exit 2) before the command runs", async () => {
    await writeFile(join(dir, "clawdis.json"), "{ link: { url: 5 } }");
    const { calls, entry, deps } = recordingCommand();
    const error = await runPluginCommand(entry, {}, recordingIO(env()), deps, signal).catch(
      (e: unknown) => e,
    );
    expect(isClawdisError(error) && error.exitCode).toBe(2);
    expect(calls).toEqual([]);
  });
});
