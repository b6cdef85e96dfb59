import { spawn } from "node:child_process";
import { readFile, rm, stat } from "node:fs/promises";
import JSON5 from "json5";
import { afterEach, describe, expect, it } from "vitest";
import { BIN, ClawdisProcess, cleanupAll, E2eState } from "./harness.js";

/**
 * `clawdis init` through the real binary against the fake model server: piped (no questions; flags, the
 * endpoint's only model, a 401 that asks for a key, defaults said out loud) and on a real pty (util-linux
 * `script`), where it offers the listed models, asks for the key without echoing it, and writes the choice.
 */
describe("e2e: clawdis init", () => {
  afterEach(cleanupAll);

  const agentOf = async (state: E2eState) =>
    (
      JSON5.parse(await readFile(state.configPath, "utf8")) as {
        inbound: { reply: { agent: { baseUrl?: string; model?: string; apiKey?: string } } };
      }
    ).inbound.reply.agent;
  const missing = (state: E2eState) =>
    stat(state.configPath).then(
      () => false,
      () => true,
    );

  it("piped: normalises a base URL without a scheme and takes the endpoint's only model", async () => {
    const state = await E2eState.create();
    await rm(state.configPath);
    const bare = state.fake.url.replace(/^http:\/\//, "").replace(/\/v1$/, "");
    const init = await state.cli(["init", "--base-url", bare]);
    expect(init.code, init.stderr).toBe(0);
    expect(init.stderr).toContain(`"${bare}" has no scheme: using ${state.fake.url}`);
    expect(init.stderr).toContain(`${state.fake.url} lists one model: using fake-model`);
    expect(await agentOf(state)).toMatchObject({ baseUrl: state.fake.url, model: "fake-model" });
    expect(state.fake.modelRequests).toHaveLength(1);
  });

  it("piped: a base URL that is no URL is exit 2 and writes nothing", async () => {
    const state = await E2eState.create();
    await rm(state.configPath);
    const init = await state.cli(["init", "--base-url", "ftp://models.lan"]);
    expect(init.code).toBe(2);
    expect(init.stderr).toContain(
      '--base-url: expected an http:// or https:// URL like "http://127.0.0.1:11434/v1", got "ftp://models.lan"',
    );
    expect(await missing(state)).toBe(true);
  });

  it("piped: a 401 says how to give a key and writes nothing; --api-key then writes it", async () => {
    const state = await E2eState.create();
    await rm(state.configPath);
    state.fake.apiKey = "sk-e2e";
    const refused = await state.cli(["init", "--base-url", state.fake.url]);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain(`${state.fake.url} answered HTTP 401: it needs an API key.`);
    expect(refused.stderr).toContain("clawdis init --api-key <key>");
    expect(refused.stderr).toContain("OPENAI_API_KEY");
    expect(await missing(state)).toBe(true);
    const init = await state.cli(["init", "--base-url", state.fake.url, "--api-key", "sk-e2e"]);
    expect(init.code, init.stderr).toBe(0);
    expect(await agentOf(state)).toMatchObject({ apiKey: "sk-e2e", model: "fake-model" });
  });

  it("piped: several models need --model (exit 2); defaults are said to be defaults", async () => {
    const state = await E2eState.create();
    await rm(state.configPath);
    state.fake.models.push("other-model");
    const several = await state.cli(["init", "--base-url", state.fake.url]);
    expect(several.code).toBe(2);
    expect(several.stderr).toContain(
      "lists 2 models (fake-model, other-model): choose one with --model <name>",
    );
    expect(await missing(state)).toBe(true);
    const defaults = await state.cli(["init", "--model", "m"]);
    expect(defaults.code, defaults.stderr).toBe(0);
    expect(defaults.stderr).toContain(
      "stdin is not a terminal, so nothing was asked: wrote the endpoint http://127.0.0.1:11434/v1 (a local Ollama)",
    );
  });

  it("on a pty: offers the endpoint's models by number, asks for the key without echoing it", async () => {
    const state = await E2eState.create();
    await rm(state.configPath);
    state.fake.apiKey = "sk-pty-secret";
    state.fake.models.splice(0, state.fake.models.length, "alpha", "beta");
    const child = spawn(
      "script",
      ["-qec", `${JSON.stringify(process.execPath)} ${JSON.stringify(BIN)} init`, "/dev/null"],
      {
        cwd: state.dir,
        env: state.env(),
        stdio: ["pipe", "pipe", "pipe"],
      },
    );
    const pty = new ClawdisProcess(child, "script clawdis init");
    state.processes.push(pty);
    await pty.stdout.waitFor("Model endpoint (OpenAI-compatible base URL) [http://127.0.0.1:11434/v1]: ");
    pty.write(state.fake.url);
    await pty.stdout.waitFor("API key (written to the config, which only you can read): ");
    pty.write("sk-pty-secret");
    await pty.stdout.waitFor("Model (number or name) [1]: ");
    pty.write("2");
    const exit = await pty.waitForExit();
    const shown = pty.stdout.text();
    expect(exit.code, shown).toBe(0);
    expect(shown).toContain(`${state.fake.url} answered HTTP 401: it needs an API key.`);
    expect(shown).toContain("lists 2 models:");
    expect(shown).toContain("1) alpha");
    expect(shown).toContain("2) beta");
    expect(shown).not.toContain("sk-pty-secret");
    expect(await agentOf(state)).toMatchObject({
      baseUrl: state.fake.url,
      apiKey: "sk-pty-secret",
      model: "beta",
    });
    expect((await stat(state.configPath)).mode & 0o777).toBe(0o600);
  });
});
