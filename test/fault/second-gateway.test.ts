import { readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { cleanupAll, type E2eState, freePort, type GatewayProcess, type Json } from "../e2e/harness.js";
import { HANG_MARKER } from "../fakes/openai-server.js";
import { expectNothingLost } from "./expect-nothing-lost.js";
import { budget, scenarioTimeout } from "./fault-budget.js";
import { faultState, HOOKS, openJournalFiles, sessionsDir } from "./fault-state.js";
import { describeAudit, Ledger, type SentMessage } from "./ledger.js";
import { scenarioRandom } from "./seeded-random.js";
import { settle } from "./settle.js";
import { requestNaming, sendHook } from "./traffic.js";

/**
 * One process owns a state dir (reliability review rows 7–8, issue 6 defect 2). Two gateways started at the same
 * moment on one state dir: exactly one serves, the other exits non-zero naming the first's pid and port, and the
 * journal the first writes is still the file on disk (its inode is the path's). A second gateway with another
 * port (another config through CLAWDIS_CONFIG_PATH) while the first has messages in flight is refused the same
 * way and answers nothing. Each trial then kills the first with `kill -9` while its acknowledged webhooks wait
 * for the model, restarts, and audits: 0 lost, 0 answered twice, 0 torn.
 */
describe("fault: a second gateway on the same state dir", () => {
  afterAll(cleanupAll);

  /** "serves" once it listens, "exited" when it ended without listening. */
  function outcome(gw: GatewayProcess, state: E2eState): Promise<"serves" | "exited"> {
    return gw.ready(state.tokenPath).then(
      () => "serves" as const,
      () => "exited" as const,
    );
  }

  /** Acknowledged webhooks whose turns wait for the model (`[[hang]]`), so their records are open at a crash. */
  async function openWebhooks(
    state: E2eState,
    gw: GatewayProcess,
    ledger: Ledger,
    n: number,
  ): Promise<SentMessage[]> {
    state.fake.hold();
    const sent: SentMessage[] = [];
    for (let i = 0; i < n; i++) {
      const message = ledger.mint("webhook", HOOKS.ci.sessionKey, HANG_MARKER);
      sent.push(message);
      // Paced on the first one's model request only: the rest queue behind it in the hook's session.
      const result = await sendHook(gw, ledger, HOOKS.ci, message, state.fake, { pace: i === 0 });
      if (!message.acked) throw new Error(`webhook ${message.marker} was not accepted: ${result}`);
    }
    return sent;
  }

  /** kill -9, restart, let the hanging answers through, wait until nothing is open; returns the new gateway. */
  async function crashAndRecover(
    state: E2eState,
    gw: GatewayProcess,
  ): Promise<{ gw: GatewayProcess; open: number }> {
    await gw.kill();
    const next = await state.startGateway();
    state.fake.release();
    return { gw: next, open: await settle(next, state) };
  }

  it(
    "two gateways started at once: one serves, the other exits naming its pid and port; nothing is lost",
    async () => {
      const random = scenarioRandom("second-gateway-at-once");
      const trials = budget(2, 10);
      const state = await faultState();
      const ledger = new Ledger();
      const findings: string[] = [];
      let last: GatewayProcess | undefined;
      for (let trial = 0; trial < trials; trial++) {
        const pair = [state.spawnGateway(), state.spawnGateway()];
        const outcomes = await Promise.all(pair.map((gw) => outcome(gw, state)));
        const winners = pair.filter((_, i) => outcomes[i] === "serves");
        expect(winners, `trial ${trial}: gateways that serve (${outcomes.join(", ")})`).toHaveLength(1);
        const winner = winners[0]!;
        const loser = pair.find((gw) => gw !== winner)!;
        const exit = await loser.waitForExit();
        expect.soft(exit.code, `trial ${trial}: the refused gateway's exit code`).toBe(1);
        const said = loser.stderr.text();
        if (!said.includes(String(winner.pid)) || !said.includes(String(state.port))) {
          findings.push(
            `trial ${trial}: the refusal does not name pid ${winner.pid} and port ${state.port}: ${said.slice(-400)}`,
          );
        }
        const replaced = (await openJournalFiles(winner.pid, state)).filter((f) => f.replaced);
        expect
          .soft(
            replaced,
            `trial ${trial}: journal files the serving gateway writes that are no longer on disk`,
          )
          .toEqual([]);
        await openWebhooks(state, winner, ledger, random.int(3, 6));
        const recovered = await crashAndRecover(state, winner);
        expect.soft(recovered.open, `trial ${trial}: records still open after the restart`).toBe(0);
        await recovered.gw.stop();
        last = recovered.gw;
      }
      expect(last).toBeDefined();
      const audit = await ledger.audit(sessionsDir(state));
      console.log(describeAudit(`two gateways at once (${trials} trials)`, audit));
      expect.soft(findings).toEqual([]);
      expectNothingLost(audit);
    },
    scenarioTimeout(90_000, 600_000),
  );

  it(
    "a second gateway on another port is refused the same way, and replays nothing of the first's",
    async () => {
      const random = scenarioRandom("second-gateway-other-port");
      const state = await faultState();
      const ledger = new Ledger();
      const first = await state.startGateway();
      const inFlight = await openWebhooks(state, first, ledger, random.int(3, 5));
      await requestNaming(state.fake, inFlight[0]!.marker);
      const requestsBefore = state.fake.requests.length;

      const otherPort = await freePort();
      const otherConfig = join(state.dir, "other-port.json");
      const config = {
        ...(JSON.parse(await readFile(state.configPath, "utf8")) as Json),
        gateway: { port: otherPort, bind: "127.0.0.1" },
      };
      await writeFile(otherConfig, JSON.stringify(config, null, 2));
      const second = state.spawnGateway({ env: { CLAWDIS_CONFIG_PATH: otherConfig } });
      const result = await outcome(second, state);
      expect.soft(result, `the second gateway; it wrote:\n${second.stderr.tail(1500)}`).toBe("exited");
      if (result === "exited") {
        expect.soft((await second.waitForExit()).code).toBe(1);
        expect.soft(second.stderr.text()).toContain(String(first.pid));
        expect.soft(second.stderr.text()).toContain(String(state.port));
      } else {
        await second.kill();
      }
      expect
        .soft(state.fake.requests.length, "model requests made by the refused gateway")
        .toBe(requestsBefore);
      const replaced = (await openJournalFiles(first.pid, state)).filter((f) => f.replaced);
      expect.soft(replaced, "journal files the first gateway writes that are no longer on disk").toEqual([]);

      const recovered = await crashAndRecover(state, first);
      expect.soft(recovered.open, "records still open after the restart").toBe(0);
      await recovered.gw.stop();
      const audit = await ledger.audit(sessionsDir(state));
      console.log(describeAudit("second gateway on another port", audit));
      expectNothingLost(audit);
    },
    scenarioTimeout(60_000, 120_000),
  );
});
