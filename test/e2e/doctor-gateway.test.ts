import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { cleanupAll, E2eState, freePort } from "./harness.js";
import { ALICE, privateChat, telegramE2e } from "./telegram-harness.js";

/**
 * `/status` and `clawdis doctor` against the real running gateway (issue 30): a down transport is said with its
 * cause and its fix, and the fix does what it says; doctor reports the gateway's transports and its model probe,
 * and describes the gateway with the gateway's own model source. Every wait is on a log line or the fake.
 */
describe("e2e: status and doctor tell the cause and the fix", () => {
  afterEach(cleanupAll);

  it("a refused Telegram token: /status and doctor say to check telegram.botToken; saving the right one is enough", async () => {
    const { state, tg, config } = await telegramE2e({ botToken: "999:wrong" });
    const gw = await state.startGateway();
    await gw.stderr.waitFor(/Telegram says 401: Unauthorized — check telegram\.botToken/);
    const line =
      "telegram down: Telegram says 401: Unauthorized — check telegram.botToken (from @BotFather; saving the file is enough)";
    expect((await gw.agent("/status")).body.payloads[0]!.text.split("\n")).toContain(line);
    const doctor = await state.cli(["doctor"]);
    expect(doctor.stdout).toContain(`✗ the running gateway (pid ${gw.child.pid}): ${line}`);
    expect(doctor.code).toBe(1);

    // The fix as the line says it: save the right token; no restart.
    const from = gw.stderr.length;
    await state.writeConfig(config({ telegram: { botToken: tg.token } }));
    await gw.stderr.waitFor("Telegram bot @", { from });
    await tg.waitFor(() => tg.polling, "the first long poll with the right token");
    expect((await gw.agent("/status")).body.payloads[0]!.text).toMatch(/^telegram ok: @\w+; long polling/m);
    tg.pushMessage({ chat: privateChat(ALICE), from: ALICE, text: "back?" });
    await tg.waitFor(() => tg.textsTo(ALICE.id).length === 1, "the answer after the fix");
    expect((await state.cli(["doctor"])).stdout).toMatch(/✓ the running gateway \(pid \d+\): telegram ok: @/);
    await gw.stop();
  });

  it("a model endpoint the gateway cannot reach is a ✗ naming the endpoint and the error", async () => {
    // A port nothing listens on: the gateway's first check is refused.
    const port = await freePort();
    const endpoint = `http://127.0.0.1:${port}/v1`;
    const state = await E2eState.create({ config: { inbound: { reply: { agent: { baseUrl: endpoint } } } } });
    const gw = await state.startGateway();
    await gw.stderr.waitFor("model endpoint check failed");
    const doctor = await state.cli(["doctor"]);
    expect(doctor.stdout).toMatch(
      new RegExp(
        `✗ the running gateway cannot reach its model endpoint ${endpoint.replace(/[.]/g, "\\.")}: .+`,
      ),
    );
    expect(doctor.stdout).not.toMatch(/✓ .*model/);
    expect(doctor.code).toBe(1);
    await gw.stop();
  });

  it("a gateway whose model comes from its own OPENAI_* environment: doctor says so, never 'No model'", async () => {
    const state = await E2eState.create({
      config: { inbound: { reply: { agent: { model: undefined, baseUrl: undefined } } } },
    });
    const gw = await state.startGateway({
      env: { OPENAI_BASE_URL: state.fake.url, OPENAI_API_KEY: "sk-test", OPENAI_MODEL: "env-model" },
    });
    // The gateway checks its endpoint once at start.
    await state.fake.waitForModelsRequest(1);
    // doctor runs without those variables (another shell): it reports the gateway's model, not its own view.
    const doctor = await state.cli(["doctor"]);
    expect(doctor.stdout).not.toContain("No model is configured");
    expect(doctor.stdout).toContain(
      `the running gateway uses model env-model (from env OPENAI_MODEL) at ${state.fake.url} (endpoint from env OPENAI_BASE_URL)`,
    );
    await gw.stop();
  });

  it("with clawdis.json and clawdis.json5 both present, the start log and doctor say which one is read", async () => {
    const state = await E2eState.create();
    const ignored = join(state.dir, "clawdis.json5");
    await writeFile(ignored, "{ logging: { level: 'debug' } }\n", { mode: 0o600 });
    const said = `${state.configPath} is read, ${ignored} is ignored`;
    const gw = await state.startGateway();
    expect(gw.stderr.text()).toContain(said);
    expect((await state.cli(["doctor"])).stdout).toContain(said);
    await gw.stop();
  });
});
