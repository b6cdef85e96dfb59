import { existsSync } from "node:fs";
import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { cleanupAll, E2eState } from "./harness.js";

describe("e2e: a bad config stops the start", () => {
  afterEach(cleanupAll);

  it("`clawdis gateway` exits 2 and names the key when idleMinutes is not a number", async () => {
    const state = await E2eState.create({
      config: { inbound: { reply: { session: { idleMinutes: "soon" } } } },
    });
    const written = await readFile(state.configPath, "utf8");
    const run = await state.cli(["gateway"]);
    expect(run.code, run.stderr).toBe(2);
    expect(run.stderr).toContain("inbound.reply.session.idleMinutes");
    expect(run.stderr).not.toMatch(/listening on/);
    expect(run.stdout).toBe("");
    // Nothing was started: no address file, and the config was not replaced by defaults.
    expect(existsSync(join(state.dir, "gateway.json"))).toBe(false);
    expect(state.fake.requests).toHaveLength(0);
    expect(await readFile(state.configPath, "utf8")).toBe(written);
  });

  it("`clawdis gateway` exits 2 and names the key and both lines when a key is written twice", async () => {
    const state = await E2eState.create();
    // The harness's own config, with gateway.port written a second time right after its first occurrence.
    const base = JSON.stringify(state.configFor(), null, 2);
    const text = base.replace(/"port": (\d+),/, '"port": $1,\n    "port": 1,');
    expect(text).not.toBe(base);
    await state.writeConfig(text);
    const first = text.split("\n").findIndex((line) => line.includes('"port"')) + 1;
    const run = await state.cli(["gateway"]);
    expect(run.code, run.stderr).toBe(2);
    expect(run.stderr).toContain(
      `gateway.port: duplicate key (clawdis.json line ${first + 1}; also line ${first}) — only the last one would count: keep one`,
    );
    expect(run.stderr).not.toMatch(/listening on|\n\s+at /);
    expect(existsSync(join(state.dir, "gateway.json"))).toBe(false);
    expect(await readFile(state.configPath, "utf8")).toBe(text);
  });
});
