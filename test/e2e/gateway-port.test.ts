import { afterEach, describe, expect, it } from "vitest";
import { cleanupAll, E2eState, freePort, GatewayProcess } from "./harness.js";

/**
 * `clawdis gateway --port <n>` through the real binary: the run listens on that port instead of gateway.port, the
 * other commands find it there, an edit of the file neither undoes the override nor restarts for it, and a port
 * that is not one is exit 2 naming the flag.
 */
describe("e2e: clawdis gateway --port", () => {
  afterEach(cleanupAll);

  it("listens on the given port for this run; clients find it; a live edit keeps the port", async () => {
    const state = await E2eState.create();
    const port = await freePort();
    expect(port).not.toBe(state.port);
    const proc = state.spawn(["gateway", "--port", String(port)]);
    const gw = await new GatewayProcess(proc.child, "clawdis gateway --port").ready(state.tokenPath);
    expect(gw.url).toBe(`http://127.0.0.1:${port}`);

    const agent = await state.cli(["agent", "-m", "hello on another port"]);
    expect(agent.stdout, agent.stderr).toBe("echo: hello on another port\n");
    expect(agent.code).toBe(0);

    // A change that applies live: the gateway must not restart onto the file's gateway.port.
    const config = state.configFor({ config: { inbound: { allowFrom: ["+15550001"] } } });
    await state.writeConfig(config);
    const { match } = await gw.stderr.waitFor(/config change: .*/);
    expect(match[0]).toContain("applied live");
    expect((await gw.call("GET", "/api/status")).status).toBe(200);
    expect(gw.stderr.text()).not.toContain(`:${state.port}`);
    await gw.stop();
  });

  it.each([["abc"], ["70000"], ["-1"], ["12.5"]])("--port %s is exit 2 naming the flag", async (value) => {
    const state = await E2eState.create();
    const run = await state.cli(["gateway", "--port", value]);
    expect(run.code).toBe(2);
    expect(run.stderr).toContain(`--port: expected a port number from 0 to 65535`);
    expect(run.stderr).not.toMatch(/listening on/);
  });
});
