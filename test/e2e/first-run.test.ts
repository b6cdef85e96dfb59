import { chmod, copyFile, readFile, rm, stat, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { cleanupAll, E2eState, REPO_ROOT } from "./harness.js";

/**
 * What a new user meets first (issue 8), through the real binary: the example config copied whole starts and
 * keeps everything under CLAWDIS_STATE_DIR, doctor agrees; the start log says which config file was read and
 * that no model is configured; the model can come from the environment alone; a bind that cannot be listened on
 * is a config error.
 */
describe("e2e: the first run", () => {
  afterEach(cleanupAll);

  it("clawdis.example.json copied whole starts, keeps the store under the state dir, and doctor calls it fine", async () => {
    const state = await E2eState.create();
    await copyFile(join(REPO_ROOT, "clawdis.example.json"), state.configPath);
    const text = await readFile(state.configPath, "utf8");
    // The example's own port may be taken on this machine: only the port is changed, nothing else.
    // (Written 0600: doctor reports a config other users can read, which a plain copy would be.)
    await writeFile(state.configPath, text.replace(/"port": \d+/, `"port": ${state.port}`), { mode: 0o600 });
    await chmod(state.configPath, 0o600);
    const gw = await state.startGateway();
    expect(gw.stderr.text()).toContain(`config ${state.configPath}`);
    expect(gw.stderr.text()).toContain(`store=${join(state.dir, "sessions", "sessions.json")}`);
    const doctor = await state.cli(["doctor"]);
    expect(doctor.stdout).toContain(`✓ config ${state.configPath} is valid`);
    expect(doctor.stdout).not.toContain("✗");
    expect(doctor.code).toBe(0);
    await gw.stop();
  });

  it("says at start which config file was read, or that none was, and that no model is configured", async () => {
    const state = await E2eState.create({ config: { inbound: { reply: { agent: { model: undefined } } } } });
    state.fake.models.splice(0, state.fake.models.length, "a", "b");
    const gw = await state.startGateway();
    await gw.stderr.waitFor("No model is configured: the agent cannot answer yet.");
    // The hint's lines may arrive in more than one chunk.
    await gw.stderr.waitFor(`Put this in ${state.configPath}`);
    expect(gw.stderr.text()).toContain(`config ${state.configPath}`);
    const status = await state.cli(["status"]);
    expect(status.stdout).toContain("model: No model is configured");
    await gw.stop();
  });

  it("a CLAWDIS_CONFIG_PATH that does not exist is exit 2, not a silent run on defaults", async () => {
    const state = await E2eState.create();
    const run = await state.cli(["gateway"], undefined, {
      env: { CLAWDIS_CONFIG_PATH: join(state.dir, "nope.json") },
    });
    expect(run.code).toBe(2);
    expect(run.stderr).toContain("CLAWDIS_CONFIG_PATH names");
  });

  it("finds clawdis.json5 next to the state dir", async () => {
    const state = await E2eState.create();
    const json5 = join(state.dir, "clawdis.json5");
    await copyFile(state.configPath, json5);
    await rm(state.configPath);
    const gw = await state.startGateway();
    expect(gw.stderr.text()).toContain(`config ${json5}`);
    await gw.stop();
  });

  it("takes the model from OPENAI_BASE_URL, OPENAI_API_KEY and OPENAI_MODEL alone, and /status says so", async () => {
    const state = await E2eState.create({
      config: { inbound: { reply: { agent: { model: undefined, baseUrl: undefined } } } },
    });
    const gw = await state.startGateway({
      env: { OPENAI_BASE_URL: state.fake.url, OPENAI_API_KEY: "sk-test", OPENAI_MODEL: "env-model" },
    });
    const reply = await gw.agent("/status");
    expect(reply.body.payloads[0]!.text).toMatch(
      /Model: env-model at .* · model from env OPENAI_MODEL, endpoint from env OPENAI_BASE_URL/,
    );
    const answer = await gw.agent("hello");
    expect(answer.body.payloads[0]!.text).toBe("echo: hello");
    expect(state.fake.requests[0]!.body.model).toBe("env-model");
    await gw.stop();
  });

  it("a gateway.bind that no interface has is exit 2 naming the key", async () => {
    const state = await E2eState.create({ config: { gateway: { bind: "192.0.2.1" } } });
    const run = await state.cli(["gateway"]);
    expect(run.code).toBe(2);
    expect(run.stderr).toContain("gateway.bind");
    expect(run.stderr).not.toMatch(/at .*\.js:\d+/);
  });

  it("warns at start about a bind that exposes the gateway to the network", async () => {
    const state = await E2eState.create({ config: { gateway: { bind: "0.0.0.0" } } });
    const gw = await state.startGateway();
    expect(gw.stderr.text()).toContain("gateway.bind is 0.0.0.0 (every network interface)");
    await gw.stop();
  });

  it("clawdis init writes a private starter config that the gateway then runs on", async () => {
    const state = await E2eState.create();
    await rm(state.configPath);
    const init = await state.cli(["init", "--base-url", state.fake.url, "--model", "fake-model"]);
    expect(init.code, init.stderr).toBe(0);
    expect((await stat(state.configPath)).mode & 0o777).toBe(0o600);
    expect((await state.cli(["init"])).code).toBe(1);
  });
});
