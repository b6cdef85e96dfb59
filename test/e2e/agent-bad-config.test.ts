import { afterEach, describe, expect, it } from "vitest";
import { cleanupAll, deepMerge, E2eState } from "./harness.js";

/**
 * `clawdis agent` while clawdis.json holds an edit that does not load: a running gateway keeps its last good
 * config, and the message goes to it with a warning; with no gateway the config error stands (exit 2).
 */
describe("e2e: clawdis agent with a config file that does not load", () => {
  afterEach(cleanupAll);

  const badConfig = (state: E2eState) =>
    `${JSON.stringify(deepMerge(state.configFor(), { inbound: { reply: { session: { idleMinutes: "soon" } } } }), null, 2)}\n`;

  it("hands the message to the running gateway, and warns that the file does not load", async () => {
    const state = await E2eState.create();
    const gw = await state.startGateway();
    const from = gw.stderr.length;
    await state.writeConfig(badConfig(state));
    await gw.stderr.waitFor("config edit rejected, the gateway keeps running on the last good config", {
      from,
    });

    const run = await state.cli(["agent", "-m", "still answering?"]);
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout).toBe("echo: still answering?\n");
    expect(run.stderr).toContain("clawdis: warning: the config file does not load (");
    expect(run.stderr).toContain("inbound.reply.session.idleMinutes");
    expect(run.stderr).toContain("the running gateway keeps running on its last good config");
    expect(state.fake.requests).toHaveLength(1);
    await gw.stop();
  });

  it("without a gateway it is the config error, exit 2 with the key path, and no model call", async () => {
    const state = await E2eState.create();
    await state.writeConfig(badConfig(state));
    const run = await state.cli(["agent", "-m", "hello"]);
    expect(run.code).toBe(2);
    expect(run.stderr).toContain("inbound.reply.session.idleMinutes");
    expect(run.stderr).not.toContain("warning");
    expect(run.stdout).toBe("");
    expect(state.fake.requests).toHaveLength(0);
  });
});
