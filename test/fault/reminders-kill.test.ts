import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { cleanupAll, contentOf, type GatewayProcess } from "../e2e/harness.js";
import { budget, faultDelay, SOAK, scenarioTimeout } from "./fault-budget.js";
import { faultState } from "./fault-state.js";
import { scenarioRandom } from "./seeded-random.js";
import { settle } from "./settle.js";
import { deadline } from "./traffic.js";

/**
 * Reminders under kill -9 (docs/tools.md, Reminders: exactly once): one-shots due every 0.4 s and a repeat every
 * second fire into session `rem` while the gateway is killed at seeded-random points (0–40 ms after the k-th model
 * request of the cycle) and restarted at once or after a delay. Asserts that every one-shot was answered exactly
 * once (late or not), that no firing (reminder id + slot) reached the transcript twice, and that nothing is left
 * open.
 */
describe("fault: kill -9 while reminders fire", () => {
  afterAll(cleanupAll);

  it(
    "every one-shot fires once, no firing runs twice, nothing is left open",
    async () => {
      const random = scenarioRandom("reminders-kill");
      const cycles = budget(5, 40);
      const shots = budget(12, 80);
      const state = await faultState();
      const route = { channel: "echo-transport", chatId: "chat-rem", chatType: "direct" };
      const now = Date.now();
      const path = join(state.dir, "reminders.json");
      await writeFile(
        path,
        JSON.stringify({
          version: 1,
          reminders: [
            ...Array.from({ length: shots }, (_, i) => ({
              id: `once-${i}`,
              text: `once ${i}`,
              at: new Date(now + 500 + i * 400).toISOString(),
              session: "rem",
              route,
            })),
            {
              id: "tick",
              text: "tick",
              cron: "* * * * * *",
              createdAt: new Date(now).toISOString(),
              session: "rem",
              route,
            },
          ],
        }),
      );
      const findings: string[] = [];
      let gw: GatewayProcess = await state.startGateway();
      for (let cycle = 0; cycle < cycles; cycle++) {
        const base = state.fake.requests.length;
        const killAfter = random.int(1, 3);
        const stall = deadline(20_000);
        const reached = await Promise.race([
          state.fake.waitForRequest(base + killAfter).then(() => "reached" as const),
          gw.exited.then(() => "exited" as const),
          stall.late.then(() => "stalled" as const),
        ]);
        stall.clear();
        if (reached !== "reached") findings.push(`cycle ${cycle}: the gateway ${reached} before a firing`);
        await faultDelay(random.int(0, 40));
        gw.child.kill("SIGKILL");
        await gw.waitForExit();
        await faultDelay(random.pick(SOAK ? [0, 250, 1000, 3000] : [0, 250, 1000]));
        gw = await state.startGateway();
      }
      // Every one-shot has come due and fired (the list no longer holds any); then the repeat goes.
      await expect
        .poll(
          async () => {
            const list = await state.cli(["reminders", "list", "--json"]);
            return (JSON.parse(list.stdout) as { reminders: { id: string }[] }).reminders.map((r) => r.id);
          },
          { timeout: 30_000, interval: 200 },
        )
        .toEqual(["tick"]);
      const rm = await state.cli(["reminders", "rm", "tick"]);
      expect.soft(rm.code, rm.stderr).toBe(0);
      const open = await settle(gw, state);
      const stop = await gw.stop().catch((error: unknown) => String(error));

      const sessionId = (await state.readStore()).rem?.sessionId ?? "";
      const firings = (await state.messages(sessionId)).filter(
        (m) => m.message.role === "user" && m.meta?.internal === "reminder",
      );
      const ids = firings.map((m) => String(m.meta?.messageId));
      const twice = ids.length - new Set(ids).size;
      const onceCounts = Array.from(
        { length: shots },
        (_, i) => firings.filter((m) => new RegExp(`^once ${i}(\\n|$)`).test(contentOf(m))).length,
      );
      const late = firings.filter((m) => /\(late: /.test(contentOf(m))).length;
      console.log(
        `[fault] reminders-kill (${cycles} kills): ${firings.length} firings stored (${late} late), ${twice} twice; one-shots answered: ${onceCounts.join(",")}; findings: ${findings.length}`,
      );
      expect.soft(findings, "the gateway's behaviour during the cycles").toEqual([]);
      expect.soft(open, "journal records still open after the last restart").toBe(0);
      expect.soft(stop, "the last graceful stop").toEqual({ code: 0, signal: null });
      expect.soft(twice, "firings stored twice (same reminder and slot)").toBe(0);
      expect(onceCounts, "each one-shot answered exactly once").toEqual(
        Array.from({ length: shots }, () => 1),
      );
    },
    scenarioTimeout(120_000, 1_800_000),
  );
});
