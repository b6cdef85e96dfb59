import { spawn } from "node:child_process";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { GATEWAY_HEAP_GROWING_PERCENT, GATEWAY_INTERRUPT_BUDGET } from "../../src/cli/gateway-v8.js";
import { BIN, cleanupAll, E2eState, GatewayProcess, REPO_ROOT } from "./harness.js";

const PRELOAD = join(REPO_ROOT, "test", "fixtures", "report-v8.cjs");

/**
 * The gateway's V8 flags (src/cli/gateway-v8.ts) through the real binary: set once the port is open, and
 * `node:v8`, which setting them loads, not loaded before (src/core/v8-flags.ts); a flag the person gave node is theirs.
 */
describe("e2e: the gateway's V8 flags", () => {
  afterEach(cleanupAll);

  it("are set after the gateway listens, and node:v8 is not loaded before", async () => {
    const state = await E2eState.create();
    const gw = await state.startGateway({ env: { NODE_OPTIONS: `--require ${PRELOAD}` } });
    await gw.stderr.waitFor(/v8 flag set: --interrupt-budget=/);
    const set = [...gw.stderr.text().matchAll(/v8 flag set: (\S+)/g)].map((m) => m[1]);
    expect(set).toEqual([
      `--heap-growing-percent=${GATEWAY_HEAP_GROWING_PERCENT}`,
      `--interrupt-budget=${GATEWAY_INTERRUPT_BUDGET}`,
    ]);
    const text = gw.stderr.text();
    expect(text).toContain("v8 loaded when listening: false");
    expect(text.indexOf("v8 loaded when listening")).toBeLessThan(text.indexOf("v8 flag set"));
    await gw.stop();
  });

  it("leaves a flag the person gave node alone", async () => {
    const state = await E2eState.create();
    const child = spawn(
      process.execPath,
      ["--interrupt-budget=50000", "--require", PRELOAD, BIN, "gateway"],
      {
        cwd: state.dir,
        env: state.env(),
        stdio: ["ignore", "pipe", "pipe"],
      },
    );
    const gw = await new GatewayProcess(child, "node --interrupt-budget=50000 clawdis gateway").ready(
      state.tokenPath,
    );
    await gw.stderr.waitFor(/v8 flag set: --heap-growing-percent=/);
    // The flags are set together, in one synchronous step: the budget would be in the text by now.
    expect(gw.stderr.text()).not.toContain("v8 flag set: --interrupt-budget");
    await gw.stop();
  });
});
