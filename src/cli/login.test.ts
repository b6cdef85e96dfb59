import { mkdtemp, rm, stat, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { isClawdisError } from "../core/errors.js";
import { builtinConfigSections } from "../main.js";
import { StateLock, stateLockPath } from "../runtime/state-lock.js";
import { recordingIO } from "./io.js";
import { type LoginFlowOptions, runLogin, type WhatsappLoginFlows } from "./login.js";

let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), "clawdis-login-"));
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

/** Flows that record how they were called (the plugin's own flows are tested in plugins/whatsapp/). */
function recordingFlows(result = 0) {
  const calls: { command: string; options: LoginFlowOptions; lockHeld: boolean }[] = [];
  const held = async () =>
    stat(stateLockPath(dir)).then(
      () => true,
      () => false,
    );
  const flows: WhatsappLoginFlows = {
    async login(options) {
      calls.push({ command: "login", options, lockHeld: await held() });
      return result;
    },
    async logout(options) {
      calls.push({ command: "logout", options: { ...options }, lockHeld: await held() });
      return result;
    },
  };
  return { calls, deps: { whatsappLogin: async () => flows, configSections: builtinConfigSections } };
}

const env = () => ({ CLAWDIS_STATE_DIR: dir, HOME: dir });
const signal = new AbortController().signal;

describe("clawdis login / logout", () => {
  it("refuses while a gateway owns the state directory, without opening a socket", async () => {
    const held = await StateLock.tryAcquire(dir, { kind: "gateway", port: 18789, now: Date.now() });
    if (!held.ok) throw new Error("the test could not take the lock");
    try {
      const { calls, deps } = recordingFlows();
      const io = recordingIO(env());
      expect(await runLogin("login", {}, io, deps, signal)).toBe(1);
      expect(io.err).toMatch(
        /a gateway \(pid \d+, port 18789\) runs on .* holds the WhatsApp link.*stop it first/,
      );
      expect(await runLogin("logout", {}, io, deps, signal)).toBe(1);
      expect(calls).toEqual([]);
    } finally {
      await held.lock.release();
    }
  });

  it("hands the flow the state directory, the config and the pairing number, holding the state directory meanwhile", async () => {
    await writeFile(join(dir, "clawdis.json"), '{ whatsapp: { socketUrl: "ws://127.0.0.1:9/ws" } }');
    const { calls, deps } = recordingFlows(0);
    const io = recordingIO(env());
    expect(await runLogin("login", { pairingCode: "+4915112345678" }, io, deps, signal)).toBe(0);
    expect(await runLogin("logout", {}, io, deps, signal)).toBe(0);
    expect(calls.map((c) => [c.command, c.lockHeld, c.options.stateDir, c.options.pairingNumber])).toEqual([
      ["login", true, dir, "+4915112345678"],
      ["logout", true, dir, undefined],
    ]);
    expect(calls[0]?.options.config.whatsapp).toMatchObject({ socketUrl: "ws://127.0.0.1:9/ws" });
    // Released afterwards: a gateway can start.
    await expect(stat(stateLockPath(dir))).rejects.toThrow(/ENOENT/);
  });

  it("passes the flow's exit code on", async () => {
    const { deps } = recordingFlows(1);
    expect(await runLogin("login", {}, recordingIO(env()), deps, signal)).toBe(1);
  });

  it("stops at a bad config (exit 2) before the flow runs", async () => {
    await writeFile(join(dir, "clawdis.json"), "{ whatsapp: { socketUrl: 'http://nope' } }");
    const { calls, deps } = recordingFlows();
    const error = await runLogin("login", {}, recordingIO(env()), deps, signal).catch((e: unknown) => e);
    expect(isClawdisError(error) && error.exitCode).toBe(2);
    expect(calls).toEqual([]);
  });

  it("says so in a build without the WhatsApp transport", async () => {
    const io = recordingIO(env());
    expect(await runLogin("login", {}, io, { configSections: builtinConfigSections }, signal)).toBe(1);
    expect(io.err).toContain("no WhatsApp transport");
  });
});
