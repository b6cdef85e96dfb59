import { afterAll, describe, expect, it } from "vitest";
import { cleanupAll, type E2eState, type GatewayProcess } from "../e2e/harness.js";
import { HANG_MARKER } from "../fakes/openai-server.js";
import { expectNothingLost } from "./expect-nothing-lost.js";
import { faultDelay, scenarioTimeout } from "./fault-budget.js";
import { faultState, HOOKS, openJournalFiles, sessionsDir } from "./fault-state.js";
import { describeAudit, Ledger } from "./ledger.js";
import { settle } from "./settle.js";
import { requestNaming, sendHook, spawnCron } from "./traffic.js";

/** How long the stalled gateway stays stopped: longer than a client's 1 s probe of `/api/status`. */
const STALL_MS = 2_500;

/**
 * `clawdis agent` and a gateway on one state dir (reliability review rows 9–10; issue 6 defects 2 and 9).
 * While the gateway is stalled (SIGSTOP for 2.5 s, a stand-in for a gateway too busy to answer its status probe)
 * a `clawdis agent -m` goes through the gateway or waits for it: it never runs in-process beside it, so the
 * gateway's journal stays the file on disk and the webhooks it acknowledged survive a crash afterwards. A
 * `clawdis agent` running in-process (no gateway) with a gateway started during its turn: answered once.
 */
describe("fault: clawdis agent beside a gateway", () => {
  afterAll(cleanupAll);

  async function crashRestartAudit(state: E2eState, gw: GatewayProcess, ledger: Ledger, label: string) {
    await gw.kill();
    const next = await state.startGateway();
    state.fake.release();
    const open = await settle(next, state);
    expect.soft(open, "records still open after the restart").toBe(0);
    await next.stop();
    const audit = await ledger.audit(sessionsDir(state));
    console.log(describeAudit(label, audit));
    expectNothingLost(audit);
  }

  it(
    "while the gateway is stalled, clawdis agent -m goes through it or waits, never in-process beside it",
    async () => {
      const state = await faultState();
      const ledger = new Ledger();
      const gw = await state.startGateway();
      state.fake.hold();
      // Acknowledged webhooks still waiting for the model: open records that a replaced journal would lose.
      for (let i = 0; i < 5; i++) {
        const message = ledger.mint("webhook", HOOKS.ci.sessionKey, HANG_MARKER);
        await sendHook(gw, ledger, HOOKS.ci, message, state.fake, { pace: i === 0 });
        expect(message.acked, `webhook ${message.marker} accepted`).toBe(true);
      }

      gw.child.kill("SIGSTOP");
      const cli = spawnCron(state, ledger, ledger.mint("cli", "main", "(while the gateway is stalled)"));
      await faultDelay(STALL_MS);
      gw.child.kill("SIGCONT");
      const result = await cli.result;
      expect.soft(result, `clawdis agent: ${cli.process.stderr.tail(800)}`).toBe("answered");
      const replaced = (await openJournalFiles(gw.pid, state)).filter((f) => f.replaced);
      expect.soft(replaced, "journal files the gateway writes that are no longer on disk").toEqual([]);
      await crashRestartAudit(state, gw, ledger, "clawdis agent while the gateway is stalled");
    },
    scenarioTimeout(90_000, 90_000),
  );

  it(
    "clawdis agent in-process with a gateway started during its turn: answered once",
    async () => {
      const state = await faultState();
      const ledger = new Ledger();
      state.fake.hold();
      const message = ledger.mint("cli", "main", HANG_MARKER);
      const cli = spawnCron(state, ledger, message);
      await requestNaming(state.fake, message.marker);

      const gw = state.spawnGateway();
      // Either the defect (the gateway replays the CLI's message: a second model request for it) or the
      // contract (the gateway says it waits for the running `clawdis agent`), or the gateway gave up.
      const what = await Promise.race([
        requestNaming(state.fake, message.marker, 2).then(() => "answered it too" as const),
        gw.stderr.waitFor(/waiting for/i, { timeoutMs: 20_000 }).then(
          () => "waits" as const,
          () => "said nothing" as const,
        ),
        gw.exited.then(() => "exited" as const),
      ]);
      console.log(`[fault] in-process agent: the gateway started during its turn ${what}`);
      expect
        .soft(what, `the gateway started during the turn; it wrote:\n${gw.stderr.tail(800)}`)
        .toBe("waits");
      state.fake.release();
      expect.soft(await cli.result, `clawdis agent: ${cli.process.stderr.tail(800)}`).toBe("answered");
      if (what === "exited") return;
      await gw.ready(state.tokenPath);
      await crashRestartAudit(state, gw, ledger, "in-process clawdis agent, gateway started during its turn");
    },
    scenarioTimeout(90_000, 90_000),
  );
});
