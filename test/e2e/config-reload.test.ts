import { mkdir, rename, rm, unlink, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { cleanupAll, deepMerge, E2eState, freePort, type GatewayProcess, type Json } from "./harness.js";
import { escapeRegExp } from "./output-log.js";
import { ALICE, privateChat, STRANGER, telegramE2e } from "./telegram-harness.js";

/**
 * Config hot reload through the real `clawdis gateway` and the real file watcher (chokidar): edits of
 * clawdis.json apply while it runs (same process), one transport restarts alone, an invalid edit or a deleted
 * file keeps the last good config, and `/status`, `clawdis status` and `clawdis doctor` say so. Every wait is
 * on a log line, an HTTP answer or a fake's request.
 */

interface TransportStatus {
  id: string;
  state: string;
  restarts: number;
}

async function transports(gw: GatewayProcess): Promise<Record<string, TransportStatus>> {
  const status = (await gw.call("GET", "/api/status")).body;
  const list = status.transports as TransportStatus[];
  return Object.fromEntries(list.map((t) => [t.id, t]));
}

/** `/status` as a person gets it (through the local API). */
async function statusText(gw: GatewayProcess): Promise<string> {
  const answer = await gw.agent("/status");
  return answer.body.payloads.map((p) => p.text).join("\n");
}

/** `config` of a `GET /api/status` answer. */
const configOf = (answer: { body: Json }): Json => (answer.body.config ?? {}) as Json;

/** Resolves once `check()` holds; each check is an HTTP round trip (the test's deadline ends a miss). */
async function until(check: () => Promise<boolean>): Promise<void> {
  while (!(await check())) {
    // Asked again at once: the next answer is the pacing.
  }
}

/** The 1-based line of the first line of `text` that contains `needle`. */
function lineOf(text: string, needle: string): number {
  return text.split("\n").findIndex((line) => line.includes(needle)) + 1;
}

describe("e2e: changing clawdis.json while the gateway runs", () => {
  afterEach(cleanupAll);

  it("an allowlist edit takes effect without a restart (same process); a denied message is never answered later; one transport restarts alone", async () => {
    const { state, tg, config } = await telegramE2e();
    const gw = await state.startGateway();
    await tg.waitFor(() => tg.polling, "the first long poll");
    const denied = tg.pushMessage({ chat: privateChat(STRANGER), from: STRANGER, text: "let me in" });
    await gw.stderr.waitFor(/sender 999 \(@eve\) is not in telegram\.allowFrom/);
    await tg.waitFor(() => tg.confirmedBelow > denied, "the stranger's update confirmed");

    // Telegram's allowlist is live: no transport restarts.
    let from = gw.stderr.length;
    await state.writeConfig(config({ telegram: { allowFrom: [ALICE.id, "@bob_b", STRANGER.id] } }));
    await gw.stderr.waitFor("config change: applied live: telegram.allowFrom", { from });
    tg.pushMessage({ chat: privateChat(STRANGER), from: STRANGER, text: "now?" });
    await tg.waitFor(() => tg.textsTo(STRANGER.id).length === 1, "the stranger's reply");
    expect(tg.textsTo(STRANGER.id)).toEqual(["echo: now?"]);
    // The message sent while denied left no trace: never answered, never shown to the model.
    expect(state.fake.requests.some((r) => JSON.stringify(r.body.messages).includes("let me in"))).toBe(
      false,
    );

    // The echo transport's allowlist is not live for it: it restarts alone, the others keep running.
    from = gw.stderr.length;
    await state.writeConfig(
      deepMerge(config({ telegram: { allowFrom: [ALICE.id, "@bob_b", STRANGER.id] } }), {
        echo: { allowFrom: ["alice", "carol"] },
      }),
    );
    await gw.stderr.waitFor("config change: echo-transport restarts for echo.allowFrom", { from });
    await gw.stderr.waitFor(/plugin started plugin=echo-transport/, { from });
    const carol = await gw.echo(
      { chatId: "c-carol", senderId: "carol", text: "hi from carol" },
      { wait: true },
    );
    expect(carol.status).toBe(200);
    expect((await gw.echo({ chatId: "c-bob", senderId: "bob", text: "hi from bob" })).status).toBe(403);
    const after = await transports(gw);
    expect(after["echo-transport"]).toMatchObject({ state: "ok", restarts: 1 });
    expect(after.telegram).toMatchObject({ restarts: 0 });
    expect(after.webchat).toMatchObject({ state: "ok", restarts: 0 });
    // Telegram kept polling through it.
    tg.pushMessage({ chat: privateChat(ALICE), from: ALICE, text: "still here" });
    // The stranger, carol and alice all wrote in main: the model sees who wrote each message.
    await tg.waitFor(() => tg.textsTo(ALICE.id).includes("echo: Alice: still here"), "alice's reply");
    expect((await gw.call("GET", "/api/status")).body.pid).toBe(gw.pid);
    expect(gw.running).toBe(true);
  });

  it("an invalid edit keeps the gateway answering on the old config; /status, clawdis status and doctor say so until a good save", async () => {
    const state = await E2eState.create();
    const gw = await state.startGateway();
    const good = state.configFor();
    const badText = `${JSON.stringify(deepMerge(good, { inbound: { reply: { session: { idleMinutes: "soon" } } } }), null, 2)}\n`;
    const line = lineOf(badText, '"idleMinutes"');
    const expected = `inbound.reply.session.idleMinutes: expected a number >= 1, got "soon" (clawdis.json line ${line})`;

    let from = gw.stderr.length;
    await state.writeConfig(badText);
    await gw.stderr.waitFor("config edit rejected, the gateway keeps running on the last good config", {
      from,
    });
    // Logged exactly as at start: the start of a gateway on this file says the same.
    await gw.stderr.waitFor(expected, { from });
    const reply = await gw.agent("still there?");
    expect(reply.body.payloads).toEqual([{ text: "echo: still there?" }]);
    expect(await statusText(gw)).toMatch(
      new RegExp(`config: last edit rejected \\d+s ago: ${escapeRegExp(expected)}`),
    );

    const status = await state.cli(["status"]);
    expect(status.code).toBe(2);
    expect(status.stderr).toContain(expected);
    expect(status.stdout).toMatch(
      new RegExp(`config: last edit rejected \\d+s ago: ${escapeRegExp(expected)}`),
    );
    expect(status.stdout).toContain(`gateway: running at ${gw.url}, pid ${gw.pid}`);

    const doctor = await state.cli(["doctor"]);
    expect(doctor.stdout).toContain(
      `- the running gateway (pid ${gw.pid}) loaded ${state.configPath} but runs on an earlier version of it: its last edit was rejected`,
    );

    from = gw.stderr.length;
    await state.writeConfig(good);
    await gw.stderr.waitFor("config re-read: no setting changed", { from });
    expect(await statusText(gw)).not.toContain("config:");
    expect((await state.cli(["status"])).stdout).not.toContain("last edit rejected");
    expect((await state.cli(["doctor"])).stdout).toContain(
      `✓ the running gateway (pid ${gw.pid}) loaded ${state.configPath} and runs on it as it is now`,
    );
  });

  it("a save-by-rename is seen; a deleted config keeps the last good config with a warning; saved again, it applies", async () => {
    const state = await E2eState.create();
    const gw = await state.startGateway();
    // An editor's atomic save: written next to the file, renamed over it.
    let from = gw.stderr.length;
    const temp = join(state.dir, ".clawdis.json.swp");
    await writeFile(
      temp,
      `${JSON.stringify(state.configFor({ allowFrom: ["alice", "bob", "carol"] }), null, 2)}\n`,
    );
    await rename(temp, state.configPath);
    await gw.stderr.waitFor("config change: echo-transport restarts for echo.allowFrom", { from });
    await gw.stderr.waitFor(/plugin started plugin=echo-transport/, { from });
    expect((await gw.echo({ chatId: "c-carol", senderId: "carol", text: "hi" }, { wait: true })).status).toBe(
      200,
    );

    from = gw.stderr.length;
    await unlink(state.configPath);
    await gw.stderr.waitFor(
      `config file ${state.configPath} was deleted: the gateway keeps running on the last good config`,
      { from },
    );
    // Carol (echo) and the owner (the local API) both wrote in main: the model sees who wrote each message.
    expect((await gw.agent("after the delete")).body.payloads).toEqual([
      { text: "echo: owner: after the delete" },
    ]);
    expect(
      (await gw.echo({ chatId: "c-carol", senderId: "carol", text: "still allowed?" }, { wait: true }))
        .status,
    ).toBe(200);
    expect(await statusText(gw)).toMatch(
      /config: .*clawdis\.json was deleted \d+s ago; running on the last good config/,
    );

    from = gw.stderr.length;
    await state.writeConfig(
      state.configFor({ config: { inbound: { reply: { agent: { model: "model-two" } } } } }),
    );
    await gw.stderr.waitFor("inbound.reply.agent.model", { from });
    const before = state.fake.requests.length;
    await gw.agent("which model?");
    expect(state.fake.requests.slice(before).map((r) => r.body.model)).toEqual(["model-two"]);
    expect(await statusText(gw)).not.toContain("was deleted");
  });

  it("the config path was a folder for a moment (EISDIR): the next valid save applies without a restart", async () => {
    const state = await E2eState.create();
    const gw = await state.startGateway();
    // At once after start, as in the review that found chokidar going blind after it (while it scans the folder).
    let from = gw.stderr.length;
    await unlink(state.configPath);
    await mkdir(state.configPath);
    await gw.stderr.waitFor(/config edit rejected, .*EISDIR/, { from });
    from = gw.stderr.length;
    await rm(state.configPath, { recursive: true });
    await state.writeConfig(
      state.configFor({ config: { inbound: { reply: { agent: { model: "after-the-folder" } } } } }),
    );
    await gw.stderr.waitFor("config change: applied live: inbound.reply.agent.model", { from });
    const before = state.fake.requests.length;
    await gw.agent("which model?");
    expect(state.fake.requests.slice(before).map((r) => r.body.model)).toEqual(["after-the-folder"]);
    expect(await statusText(gw)).not.toMatch(/rejected|EISDIR/);
  });

  it("a port change restarts the gateway in-process on the new port (same process)", async () => {
    const state = await E2eState.create();
    const gw = await state.startGateway();
    const port = await freePort();
    const from = gw.stderr.length;
    await state.writeConfig(state.configFor({ config: { gateway: { port } } }));
    await gw.stderr.waitFor("config change: the gateway restarts for gateway.port", { from });
    await gw.stderr.waitFor(`listening on http://127.0.0.1:${port}`, { from });
    gw.url = `http://127.0.0.1:${port}`;
    const status = (await gw.call("GET", "/api/status")).body as Json;
    expect(status.pid).toBe(gw.pid);
    expect((await gw.agent("on the new port")).body.payloads).toEqual([{ text: "echo: on the new port" }]);
    const matches = `✓ the running gateway (pid ${gw.pid}) loaded ${state.configPath} and runs on it as it is now`;
    expect((await state.cli(["doctor"])).stdout).toContain(matches);
    // A restart asked for over the API: the new gateway is compared with the file again.
    const again = gw.stderr.length;
    expect((await gw.call("POST", "/api/restart")).status).toBe(202);
    await gw.stderr.waitFor(`listening on http://127.0.0.1:${port}`, { from: again });
    await until(async () => typeof configOf(await gw.call("GET", "/api/status")).sha256 === "string");
    expect((await state.cli(["doctor"])).stdout).toContain(matches);
  });
});
