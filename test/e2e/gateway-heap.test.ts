import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { cleanupAll, E2eState, REPO_ROOT } from "./harness.js";

const PRELOAD = join(REPO_ROOT, "test", "fixtures", "report-v8.cjs");

/**
 * The gateway's V8 heap flag (src/cli/gateway-heap.ts) through the real binary: set once the port is open, and
 * `node:v8`, which setting it loads, not loaded before (src/core/v8-flags.ts).
 */
describe("e2e: the gateway's heap flag", () => {
  afterEach(cleanupAll);

  it("is set after the gateway listens, and node:v8 is not loaded before", async () => {
    const state = await E2eState.create();
    const gw = await state.startGateway({ env: { NODE_OPTIONS: `--require ${PRELOAD}` } });
    const { match } = await gw.stderr.waitFor(/v8 flag set: (\S+)/);
    expect(match[1]).toBe("--heap-growing-percent=100");
    expect(gw.stderr.text()).toContain("v8 loaded when listening: false");
    expect(gw.stderr.text().indexOf("v8 loaded when listening")).toBeLessThan(
      gw.stderr.text().indexOf("v8 flag set"),
    );
    await gw.stop();
  });
});
