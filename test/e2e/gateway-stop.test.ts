import { existsSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { cleanupAll, E2eState } from "./harness.js";

/**
 * `clawdis gateway stop` (docs/runtime.md, Stopping and restarting): asks the gateway of this state directory to
 * stop over its local API with the token, and returns once the process has exited. Exit 0; 1 when none runs.
 */
describe("e2e: clawdis gateway stop", () => {
  afterEach(cleanupAll);

  it("stops a running gateway gracefully (its running turn is told) and exits 0 once the process is gone", async () => {
    const state = await E2eState.create({ allowFrom: ["alice"] });
    state.fake.enqueue({ hang: "before-headers", text: "never sent" });
    const gw = await state.startGateway();
    const waiting = gw.echo(
      { chatId: "chat-stop", senderId: "alice", text: "answer me later", messageId: "stop-cli-1" },
      { wait: true },
    );
    await state.fake.waitForRequest(1);
    const stop = await state.cli(["gateway", "stop"]);
    expect(stop.code, stop.stderr).toBe(0);
    // It returned only once the gateway had exited.
    expect(gw.running).toBe(false);
    expect(await gw.exited).toEqual({ code: 0, signal: null });
    expect(stop.stderr).toContain(`stopping the gateway (pid ${gw.pid})`);
    expect(stop.stderr).toContain("the gateway stopped");
    expect(stop.stdout).toBe("");
    expect(gw.stderr.text()).toMatch(/INFO stopping requestedBy="clawdis gateway stop"[\s\S]*INFO stopped/);
    expect((await waiting).body).toMatchObject({
      outcome: {
        payloads: [{ text: "The gateway is stopping; your message will be answered after it restarts." }],
      },
    });
    expect(existsSync(join(state.dir, "gateway.json"))).toBe(false);
  });

  it("with no gateway running: exit 1 and a line that says so", async () => {
    const state = await E2eState.create();
    const stop = await state.cli(["gateway", "stop"]);
    expect(stop.code).toBe(1);
    expect(stop.stderr).toBe("clawdis: no gateway is running on this state directory: nothing to stop\n");
    expect(stop.stdout).toBe("");
  });

  it("refuses a wrong token clearly (exit 1), and the gateway keeps running", async () => {
    const state = await E2eState.create();
    const gw = await state.startGateway();
    const { writeFile } = await import("node:fs/promises");
    await writeFile(state.tokenPath, "not-the-token\n");
    const stop = await state.cli(["gateway", "stop"]);
    expect(stop.code).toBe(1);
    expect(stop.stderr).toMatch(/refused the token/);
    expect(gw.running).toBe(true);
  });
});
