import { spawn } from "node:child_process";
import { createConnection } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import { ClawdisProcess, cleanupAll, E2eState, REPO_ROOT } from "./harness.js";

/** Whether something accepts connections on 127.0.0.1:`port`. */
function portOpen(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = createConnection({ host: "127.0.0.1", port });
    socket.once("connect", () => {
      socket.destroy();
      resolve(true);
    });
    socket.once("error", () => resolve(false));
  });
}

/**
 * Stopping under a service manager (issue 8): SIGTERM to `npm start` stops the gateway (the script `exec`s, so
 * npm's signal reaches node, not a shell that keeps it), and a SIGTERM at once after the `listening on` line still
 * ends in the graceful stop.
 */
describe("e2e: signals", () => {
  afterEach(cleanupAll);

  it("SIGTERM to `npm start` stops the gateway and frees the port", async () => {
    const state = await E2eState.create();
    const npm = spawn("npm", ["start", "--silent"], {
      cwd: REPO_ROOT,
      env: state.env({ CLAWDIS_CONFIG_PATH: state.configPath }),
      stdio: ["ignore", "pipe", "pipe"],
    });
    const proc = new ClawdisProcess(npm, "npm start");
    state.processes.push(proc);
    await proc.stderr.waitFor(/listening on http:\/\//, { timeoutMs: 20_000 });
    expect(await portOpen(state.port)).toBe(true);
    npm.kill("SIGTERM");
    await proc.waitForExit(15_000);
    await proc.stderr.waitFor("stopped");
    expect(await portOpen(state.port)).toBe(false);
  });

  it("a SIGTERM right after the `listening on` line ends in the graceful stop", async () => {
    const state = await E2eState.create();
    const gateway = state.spawnGateway();
    await gateway.stderr.waitFor(/listening on http:\/\//);
    gateway.child.kill("SIGTERM");
    const exit = await gateway.waitForExit();
    expect(exit.code).toBe(0);
    expect(gateway.stderr.text()).toMatch(/stopping signal=SIGTERM[\s\S]*stopped/);
  });

  it("a SIGTERM while the gateway is still starting is not lost", async () => {
    const state = await E2eState.create();
    const gateway = state.spawnGateway();
    // As early as can be observed: the process exists. The signal is caught from the first moment of the command.
    await gateway.stderr.waitFor(/waiting for|plugin started|listening on/);
    gateway.child.kill("SIGTERM");
    const exit = await gateway.waitForExit();
    expect(exit.code).toBe(0);
    expect(gateway.stderr.text()).toContain("stopped");
  });
});
