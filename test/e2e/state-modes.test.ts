import { stat } from "node:fs/promises";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { findWideModes } from "../../src/cli/doctor-modes.js";
import { cleanupAll, E2eState } from "./harness.js";

/**
 * What clawdis writes is private to the user from the very first run (docs/files.md), with the usual umask
 * (022, checked here) that would leave anything created without an explicit mode readable by others. The state
 * directory does not exist yet: the first command creates it (0700), and the first is a one-shot `clawdis agent`,
 * the one path that creates the journal without the compaction at open (0600).
 */
describe("e2e: modes on a fresh state directory", () => {
  afterEach(cleanupAll);

  it("a first one-shot clawdis agent, then a gateway and a turn: every file 0600, every folder 0700", async () => {
    expect(process.umask() & 0o077, "the umask this test needs to mean something").toBe(0o022);
    // The harness's dir holds the config and is HOME; the state dir is a path inside it that nothing made yet.
    const state = await E2eState.create();
    const stateDir = join(state.dir, "fresh-state");
    const env = { CLAWDIS_STATE_DIR: stateDir, CLAWDIS_CONFIG_PATH: state.configPath };
    await expect(stat(stateDir)).rejects.toThrow(/ENOENT/);

    const first = await state.cli(["agent", "-m", "first words"], undefined, { env });
    expect(first.stdout, first.stderr).toBe("echo: first words\n");
    expect((await stat(stateDir)).mode & 0o777, "the state dir made by the first command").toBe(0o700);
    const journal = join(stateDir, "journal", "inbound.jsonl");
    expect((await stat(journal)).mode & 0o777, "the journal made by a one-shot agent").toBe(0o600);

    const gw = await state.spawnGateway({ env }).ready(join(stateDir, "gateway.token"));
    const answer = await gw.agent("and then");
    expect(answer.body.payloads).toEqual([{ text: "echo: and then" }]);
    expect(await gw.stop()).toEqual({ code: 0, signal: null });

    expect(await findWideModes([{ path: stateDir, recursive: true }])).toEqual([]);
  });
});
