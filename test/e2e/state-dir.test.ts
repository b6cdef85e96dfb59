import { stat, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { cleanupAll, contentOf, E2eState, freePort } from "./harness.js";

/**
 * One process owns a state directory (issue 6, D2 and D9): a second gateway is refused before it touches any
 * state file, `clawdis agent` never runs in-process beside a gateway, and a gateway waits for an in-process
 * `clawdis agent` turn instead of answering its message a second time.
 */
describe("e2e: one process per state directory", () => {
  afterEach(cleanupAll);

  const journalInode = async (state: E2eState) =>
    (await stat(join(state.dir, "journal", "inbound.jsonl"))).ino;

  it("refuses a second gateway on the same port, naming the first's pid and port, and leaves its journal alone", async () => {
    const state = await E2eState.create();
    const first = await state.startGateway();
    const inode = await journalInode(state);
    const second = await state.cli(["gateway"]);
    expect(second.code).toBe(1);
    expect(second.stderr).toContain(`a gateway (pid ${first.child.pid}`);
    expect(second.stderr).toContain(String(state.port));
    expect(await journalInode(state)).toBe(inode);
    const answer = await state.cli(["agent", "-m", "still there?"]);
    expect(answer.stdout).toBe("echo: still there?\n");
    expect(await journalInode(state)).toBe(inode);
  });

  it("refuses a second gateway configured on another port", async () => {
    const state = await E2eState.create();
    const first = await state.startGateway();
    const other = join(state.dir, "other.json");
    const config = state.configFor();
    await writeFile(
      other,
      JSON.stringify({ ...config, gateway: { port: await freePort(), bind: "127.0.0.1" } }),
    );
    const second = await state.cli(["gateway"], undefined, { env: { CLAWDIS_CONFIG_PATH: other } });
    expect(second.code).toBe(1);
    expect(second.stderr).toContain(`pid ${first.child.pid}`);
    expect(second.stderr).toContain("one gateway per state directory");
  });

  it("a gateway started during an in-process `clawdis agent` turn waits for it; the message is answered once", async () => {
    const state = await E2eState.create();
    state.fake.enqueue({ text: "answered in-process", hang: "before-headers" });
    const agent = state.spawn(["agent", "-m", "only once please"]);
    agent.child.stdin?.end();
    await state.fake.waitForRequest(1);
    const gateway = state.spawnGateway();
    await gateway.stderr.waitFor("waiting for `clawdis agent`");
    state.fake.release();
    expect((await agent.waitForExit()).code).toBe(0);
    await gateway.ready(state.tokenPath);
    // The gateway is up and has had its chance to replay: nothing of that message is open or answered again.
    const status = await gateway.call<{ openJournalRecords: number }>("GET", "/api/status");
    expect(status.body.openJournalRecords).toBe(0);
    const entry = (await state.readStore()).main!;
    const finals = (await state.messages(entry.sessionId)).filter((m) => m.message.role === "assistant");
    expect(finals.map(contentOf)).toEqual(["answered in-process"]);
    expect(state.fake.requests).toHaveLength(1);
  });

  it("`clawdis agent` while the gateway is stalled waits for it instead of running in-process", async () => {
    const state = await E2eState.create();
    const gateway = await state.startGateway();
    const inode = await journalInode(state);
    process.kill(gateway.child.pid!, "SIGSTOP");
    const agent = state.spawn(["agent", "-m", "through the gateway"]);
    agent.child.stdin?.end();
    try {
      await agent.stderr.waitFor("waiting for a gateway");
    } finally {
      process.kill(gateway.child.pid!, "SIGCONT");
    }
    const exit = await agent.waitForExit(20_000);
    expect(exit.code, agent.stderr.text()).toBe(0);
    expect(agent.stdout.text()).toBe("echo: through the gateway\n");
    expect(await journalInode(state)).toBe(inode);
    const entry = (await state.readStore()).main!;
    const users = (await state.messages(entry.sessionId)).filter((m) => m.message.role === "user");
    expect(users.map(contentOf)).toEqual(["through the gateway"]);
  });
});
