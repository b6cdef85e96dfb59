import { existsSync } from "node:fs";
import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { cleanupAll, type GatewayProcess } from "../e2e/harness.js";
import { expectNothingLost } from "./expect-nothing-lost.js";
import { budget, faultDelay, SOAK, scenarioTimeout } from "./fault-budget.js";
import { faultState, HOOKS, sessionsDir } from "./fault-state.js";
import { describeAudit, Ledger } from "./ledger.js";
import { apiLoop, hookLoop, type LoadOptions } from "./load.js";
import { scenarioRandom } from "./seeded-random.js";
import { settle } from "./settle.js";
import { type CronRun, deadline, spawnCron } from "./traffic.js";

/**
 * Crash safety under load (reliability review rows 1–4): API messages streamed into three sessions (some with a
 * `bash` tool call, some streamed slowly) and webhooks into their own session and into `main`, while the gateway
 * is killed (`kill -9`, now and then a graceful SIGTERM) at seeded-random points: after the k-th model request of
 * the cycle plus a few ms, so kills land mid-stream, mid-tool and mid-store-write. It restarts at once or after a
 * delay (in the soak also after 11 s, when a left-behind store lock is stale). In about half the cycles cron-style
 * `clawdis agent -m` runs start around the kill: before it, while the gateway is down and while it starts.
 * Asserts 0 lost, 0 answered twice, 0 torn lines, no `clawdis agent` hung, nothing left open.
 */
describe("fault: kill -9 during streamed turns, webhooks and tool calls", () => {
  afterAll(cleanupAll);

  it(
    "restarts at once or after a delay, with clawdis agent calls around them: 0 lost, 0 twice, 0 torn",
    async () => {
      const random = scenarioRandom("kill-restart");
      const cycles = budget(8, 60);
      const state = await faultState();
      const ledger = new Ledger();
      const crons: CronRun[] = [];
      const findings: string[] = [];
      const load = (keys: string[], extra: Partial<LoadOptions> = {}): LoadOptions => ({
        ledger,
        random,
        fake: state.fake,
        keys,
        slowChance: 0.3,
        slowMs: [5, 25],
        ...extra,
      });
      const cron = (why: string) => {
        const key = random.chance(0.7) ? "main" : "cron";
        crons.push(spawnCron(state, ledger, ledger.mint("cli", key, `(${why})`)));
      };

      let locksLeft = 0;
      let gw: GatewayProcess = await state.startGateway();
      for (let cycle = 0; cycle < cycles; cycle++) {
        const withCron = random.chance(0.5);
        const killAfter = random.int(2, 10);
        const offsetMs = random.int(0, 40);
        const signal = random.chance(1 / 6) ? "SIGTERM" : "SIGKILL";
        const downMs = random.pick(SOAK ? [0, 0, 250, 1000, 11_000] : [0, 0, 250, 1000]);
        const base = state.fake.requests.length;
        let sending = true;
        const keepGoing = () => sending;
        const loops = [
          apiLoop(gw, load(["main"], { toolChance: 0.3 }), keepGoing),
          apiLoop(gw, load(["k1", "k2"]), keepGoing),
          hookLoop(gw, load([]), [HOOKS.ci, HOOKS.backup], keepGoing),
        ];
        if (withCron) cron("before the kill");

        const stall = deadline(20_000);
        const reached = await Promise.race([
          state.fake.waitForRequest(base + killAfter).then(() => "reached" as const),
          gw.exited.then(() => "exited" as const),
          stall.late.then(() => "stalled" as const),
        ]);
        stall.clear();
        if (reached !== "reached") {
          findings.push(`cycle ${cycle}: the gateway ${reached} before model request ${base + killAfter}`);
        }
        await faultDelay(offsetMs);
        if (withCron && random.chance(0.5)) cron("at the kill");
        gw.child.kill(signal);
        const exit = await gw.waitForExit().catch((error: unknown) => {
          findings.push(`cycle ${cycle}: ${signal} did not end the gateway: ${String(error).slice(0, 300)}`);
          return undefined;
        });
        if (signal === "SIGTERM" && exit && exit.code !== 0) {
          findings.push(`cycle ${cycle}: SIGTERM exit ${JSON.stringify(exit)}`);
        }
        if (existsSync(`${state.storePath}.lock`)) locksLeft++;
        sending = false;
        await Promise.all(loops);
        if (withCron) cron("while it is down");
        await faultDelay(downMs);
        gw = state.spawnGateway();
        if (withCron && random.chance(0.5)) cron("while it starts");
        await gw.ready(state.tokenPath);
      }

      const cronResults = await Promise.all(crons.map((c) => c.result));
      const open = await settle(gw, state);
      const stop = await gw.stop().catch((error: unknown) => String(error));
      const audit = await ledger.audit(sessionsDir(state));
      const toolRuns = await readFile(join(state.dir, "workspace", "tool-runs.txt"), "utf8").catch(() => "");
      const runs = toolRuns.split("\n").filter(Boolean);
      const ranTwice = runs.length - new Set(runs).size;
      console.log(describeAudit(`kill-restart (${cycles} cycles)`, audit));
      console.log(
        `[fault] kill-restart: ${crons.length} clawdis agent runs: ${cronResults.filter((r) => r === "answered").length} answered, ${cronResults.filter((r) => r === "failed").length} failed, ${cronResults.filter((r) => r === "hung").length} hung; ${runs.length} tool runs, ${ranTwice} repeated after a crash; ${locksLeft} kills left the store lock behind; findings: ${findings.length}`,
      );

      expect.soft(findings, "the gateway's behaviour during the cycles").toEqual([]);
      expect.soft(cronResults.filter((r) => r === "hung").length, "clawdis agent runs that hung").toBe(0);
      const unclear = crons
        .filter((c) => /unexpected error/.test(c.process.stderr.text()))
        .map(
          (c) =>
            `${c.message.marker}: ${c.process.stderr
              .text()
              .split("\n")
              .find((l) => /unexpected error/.test(l))}`,
        );
      expect.soft(unclear, "clawdis agent failures must be clear errors, not bug reports").toEqual([]);
      expect.soft(open, "journal records still open after the last restart").toBe(0);
      expect.soft(stop, "the last graceful stop").toEqual({ code: 0, signal: null });
      expect(audit.acked, "the scenario acknowledged messages").toBeGreaterThan(cycles);
      expectNothingLost(audit);
    },
    scenarioTimeout(240_000, 3_600_000),
  );
});
