import { randomUUID } from "node:crypto";
import { readdir, readFile } from "node:fs/promises";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import type { MessageEntry } from "../../src/sessions/types.js";
import { expectNothingLost } from "../fault/expect-nothing-lost.js";
import { faultState, HOOKS, sessionsDir } from "../fault/fault-state.js";
import { describeAudit, Ledger, type SentMessage } from "../fault/ledger.js";
import { scenarioRandom } from "../fault/seeded-random.js";
import { settle } from "../fault/settle.js";
import { postHook, sendApi } from "../fault/traffic.js";
import { cleanupAll, type E2eState, freePort, type GatewayProcess } from "./harness.js";

/**
 * Stricter than the ledger (whose fake model echoes every message since the last answer, so a later turn would
 * name a dropped message too): each person's message must be answered by the first final reply after it in its
 * transcript, and that reply must be its own turn's or the turn it joined (one that began before it). Returns the
 * journal ids of messages answered otherwise.
 */
async function answeredOutOfTurn(dir: string): Promise<string[]> {
  const wrong: string[] = [];
  for (const file of (await readdir(dir)).filter((f) => f.endsWith(".jsonl"))) {
    const entries = (await readFile(join(dir, file), "utf8"))
      .split("\n")
      .filter((l) => l.trim())
      .map((l) => JSON.parse(l) as MessageEntry);
    const userAt = new Map<string, number>();
    entries.forEach((e, i) => {
      if (e.type === "message" && e.message.role === "user" && typeof e.meta?.journalId === "string")
        userAt.set(e.meta.journalId, i);
    });
    for (const [jid, at] of userAt) {
      const answer = entries.slice(at + 1).find((e) => e.type === "message" && e.meta?.final === true);
      const turn = typeof answer?.meta?.journalId === "string" ? answer.meta.journalId : undefined;
      const ok = turn === jid || (turn !== undefined && (userAt.get(turn) ?? Number.POSITIVE_INFINITY) < at);
      if (!ok) wrong.push(`${jid} (${file}): first answer after it is ${turn ?? "none"}`);
    }
  }
  return wrong;
}

/** How often one message is handed in again (same message id) before the test calls the gateway unreachable. */
const MAX_TRIES = 40;
/**
 * The longest pause before the next try when no newer `listening on` line comes: a try can fail without a
 * restart (a client timeout on a loaded machine), and then no line is coming.
 */
const RETRY_PAUSE_MS = 500;

/**
 * Hands `message` in until the gateway acknowledges it, as a client that retries does: the same message id every
 * time (a try that reached the gateway after all is a duplicate, never a second turn). A try the gateway did not
 * take (its server was down or stopping for a restart) is made again once it listens again.
 */
async function deliver(
  gw: GatewayProcess,
  ledger: Ledger,
  message: SentMessage,
  via: "api" | "hook",
): Promise<void> {
  const messageId = randomUUID();
  for (let attempt = 1; attempt <= MAX_TRIES && !message.acked; attempt++) {
    // The line that announced the address this try goes to: a try that fails waits for a newer one. (Not the
    // log's end now: the gateway may listen elsewhere already, in a line written before `gw.url` followed it.)
    const from = announced.get(gw) ?? 0;
    // A try whose acknowledgement a restart cut off, tried again: the gateway has the message and says so (409,
    // this messageId was already received). That is its acknowledgement too; the audit still checks that the
    // message was answered, once.
    if (via === "api") {
      const result = await sendApi(gw, ledger, message, { messageId });
      if (result === "refused" && message.answer?.startsWith("409 ")) ledger.ack(message);
    } else {
      const answer = await postHook(gw, HOOKS.backup, message.text, messageId);
      if (answer !== "broken" && [200, 202, 409].includes(answer.status)) ledger.ack(message);
    }
    if (message.acked) return;
    // Once it listens again (a restart took the try), or after a pause (a try that failed for another reason).
    // The wait for the line goes on behind a pause that ends first: it still points the clients at the new
    // address when the line comes; a line that never comes is the retries' business, not a failure of its own.
    await Promise.race([
      listeningAgain(gw, from).catch(() => {}),
      new Promise((resolve) => setTimeout(resolve, RETRY_PAUSE_MS)),
    ]);
  }
}

/** Where in the gateway's stderr the `listening on` line of its current `gw.url` ends. */
const announced = new WeakMap<GatewayProcess, number>();

/**
 * Waits for the next `listening on` line after `from` and points the clients at that address, unless a newer line
 * than it pointed them at already.
 */
async function listeningAgain(gw: GatewayProcess, from: number): Promise<void> {
  const { match, end } = await gw.stderr.waitFor(/listening on (http:\/\/\S+)/, { from, timeoutMs: 20_000 });
  if (end <= (announced.get(gw) ?? 0)) return;
  gw.url = match[1] ?? gw.url;
  announced.set(gw, end);
}

/**
 * An in-process restart through the real config watcher: `gateway.port` edited in clawdis.json (a key that needs
 * the whole gateway), then the restart's log line; the clients follow to the new port.
 */
async function movePort(state: E2eState, gw: GatewayProcess, port: number): Promise<void> {
  const from = gw.stderr.length;
  await writeConfigPort(state, port);
  await gw.stderr.waitFor(/INFO restarted reason="config change: gateway\.port"/, {
    from,
    timeoutMs: 20_000,
  });
  await listeningAgain(gw, from);
}

/**
 * In-process restarts (docs/runtime.md, Stopping and restarting) through the real binary: the same process and
 * state-dir lock throughout, the transports stopped and started again, what was under way drained and finished.
 */
describe("e2e: in-process restarts", () => {
  afterEach(cleanupAll);

  it("20 in-process restarts while messages arrive: none lost, each answered once, no tool run twice", async () => {
    const random = scenarioRandom("in-process-restarts");
    const state = await faultState();
    const ledger = new Ledger("r");
    const gw = await state.startGateway();
    const ports = [await freePort(), state.port];
    let sending = true;
    const loop = async (key: string, via: "api" | "hook", toolChance: number) => {
      while (sending) {
        const message = ledger.mint(via === "api" ? "api" : "webhook", key);
        const extra: string[] = [];
        if (random.chance(toolChance)) extra.push(`[[bash:echo ${message.id} >> tool-runs.txt]]`);
        if (random.chance(0.3)) extra.push(`[[slow:${random.int(5, 25)}]]`);
        if (extra.length > 0) message.text = `${message.text} ${extra.join(" ")}`;
        // A webhook is acknowledged before its turn: its loop waits until a model request came after the hand-in
        // (counted before it, so a request that came before the wait began counts; once the other loops stopped,
        // a count taken after the hand-in would wait for a request nobody sends).
        const requestsBefore = state.fake.requests.length;
        await deliver(gw, ledger, message, via);
        if (via === "hook") await state.fake.waitForRequest(requestsBefore + 1);
      }
    };
    const loops = [
      loop("main", "api", 0.4),
      loop("k1", "api", 0.2),
      loop(HOOKS.backup.sessionKey, "hook", 0),
    ];
    for (let i = 0; i < 20; i++) {
      // Each restart lands while turns run: after a few more model requests.
      await state.fake.waitForRequest(state.fake.requests.length + random.int(1, 4));
      await movePort(state, gw, ports[i % 2]!);
    }
    sending = false;
    await Promise.all(loops);
    const open = await settle(gw, state);
    const audit = await ledger.audit(sessionsDir(state));
    console.log(describeAudit("in-process restarts (20)", audit));
    const runs = (await readFile(join(state.dir, "workspace", "tool-runs.txt"), "utf8").catch(() => ""))
      .split("\n")
      .filter(Boolean);

    expect(gw.running, "the same process throughout").toBe(true);
    expect(gw.stderr.text().match(/INFO restarted reason=/g)).toHaveLength(20);
    const drained = gw.stderr.text().match(/turn drained .*action=\w+/g) ?? [];
    console.log(
      `[e2e] ${drained.length} turns drained: ${drained.filter((d) => d.endsWith("resume")).length} resumed`,
    );
    expect(drained.length, "restarts that found a turn running").toBeGreaterThan(0);
    expect(open, "journal records still open").toBe(0);
    expect(audit.acked).toBe(ledger.messages.length);
    expect(audit.acked).toBeGreaterThan(20);
    expectNothingLost(audit);
    expect(await answeredOutOfTurn(sessionsDir(state)), "answered by another turn's reply").toEqual([]);
    expect(runs.length - new Set(runs).size, "tool calls run twice").toBe(0);
    expect(await gw.stop()).toEqual({ code: 0, signal: null });
  }, 240_000);

  it("a gateway.port edit rebinds in the same process: the new port answers, the old one is closed, clients find it", async () => {
    const state = await faultState();
    const gw = await state.startGateway();
    const oldUrl = gw.url;
    const port = await freePort();
    await movePort(state, gw, port);
    expect(gw.url).toBe(`http://127.0.0.1:${port}`);
    expect((await gw.call("GET", "/api/status")).body.pid).toBe(gw.pid);
    await expect(fetch(`${oldUrl}/api/status`)).rejects.toThrow();
    // Local clients find it where it listens now (the state-dir lock and gateway.json carry the new address).
    const status = await state.cli(["status", "--json"]);
    expect(JSON.parse(status.stdout).gateway).toMatchObject({ running: true, url: gw.url });
    const answer = await gw.agent("after the move");
    expect(answer.body.payloads).toEqual([{ text: "echo: after the move" }]);
    const stop = await state.cli(["gateway", "stop"]);
    expect(stop.code, stop.stderr).toBe(0);
  });

  it("a new config that does not start (its port taken) keeps the gateway on the previous one, and says so", async () => {
    const state = await faultState();
    const gw = await state.startGateway();
    const { createServer } = await import("node:net");
    const blocker = createServer();
    const port = await freePort();
    await new Promise<void>((resolve) => blocker.listen(port, "127.0.0.1", resolve));
    try {
      const from = gw.stderr.length;
      await writeConfigPort(state, port);
      await gw.stderr.waitFor(/could not start on the new config .*starting again on the previous one/, {
        from,
      });
      await gw.stderr.waitFor(/listening on http/, { from });
      const answer = await gw.agent("still here");
      expect(answer.body.payloads).toEqual([{ text: "echo: still here" }]);
      // Once: the file that failed to start is not tried again and again (the next save is).
      expect(gw.stderr.text().match(/restarting in-process/g)).toHaveLength(1);
    } finally {
      blocker.close();
    }
  });

  it("POST /api/restart with a config that does not load: 400 with the error, the gateway runs on", async () => {
    const state = await faultState();
    const gw = await state.startGateway();
    await state.writeConfig("{ gateway: { port: 'not a port' } }");
    const answer = await gw.call<{ message: string }>("POST", "/api/restart");
    expect(answer.status).toBe(400);
    expect(answer.body.message).toMatch(
      /the config does not load: [\s\S]*gateway\.port: expected an integer/,
    );
    expect(gw.stderr.text()).not.toMatch(/restarting in-process/);
    expect((await gw.agent("fine")).body.payloads).toEqual([{ text: "echo: fine" }]);
  });
});

async function writeConfigPort(state: E2eState, port: number): Promise<void> {
  const config = JSON.parse(await readFile(state.configPath, "utf8")) as { gateway: { port: number } };
  config.gateway.port = port;
  await state.writeConfig(config);
}
