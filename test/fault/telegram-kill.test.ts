import { afterAll, describe, expect, it } from "vitest";
import { cleanupAll, type GatewayProcess } from "../e2e/harness.js";
import { ALICE, BOB, privateChat, telegramE2e } from "../e2e/telegram-harness.js";
import type { FakeUser } from "../fakes/telegram-server.js";
import { budget, faultDelay, SOAK, scenarioTimeout } from "./fault-budget.js";
import { absoluteNow, OffThreadKiller } from "./off-thread-kill.js";
import { scenarioRandom } from "./seeded-random.js";
import { audit, firstTaken, splitTwice, tokensTo } from "./telegram-tokens.js";

const CAROL: FakeUser = { id: 333, first_name: "Carol", username: "carol" };
const DAVE: FakeUser = { id: 444, first_name: "Dave", username: "dave" };
const USERS = [ALICE, BOB, CAROL, DAVE];

/**
 * Replies sent twice after kill -9 on Telegram (issue 30, reliability review m1): four people write to the bot
 * steadily (each sends its next message a moment after the last one was answered), and the gateway is killed with
 * SIGKILL at seeded-random moments and restarted at once. A kill between the Bot API taking a reply and the
 * journal recording it sends that reply again; the send thread writes the record the moment the answer comes
 * (docs/runtime.md, "The send thread"). The target is at most 1 per 100 kills, checked by the soak (100 kills
 * under CLAWDIS_SOAK=1); a normal run (8 kills) checks that nothing is lost. Nothing may be lost in either.
 */
describe("fault: kill -9 while Telegram replies go out", () => {
  afterAll(cleanupAll);

  it("every message answered; replies twice at most 1 per 100 kills (soak)", {
    timeout: scenarioTimeout(120_000, 900_000),
  }, async () => {
    const random = scenarioRandom("telegram-kill");
    const kills = budget(8, 100);
    const { state, tg } = await telegramE2e({ allowFrom: USERS.map((u) => u.id) });
    const sent = new Map<number, string[]>(USERS.map((u) => [u.id, []]));
    let sending = true;
    const talk = async (user: FakeUser) => {
      for (let n = 0; sending; n++) {
        const token = `tok-${user.username}-${n}`;
        sent.get(user.id)!.push(token);
        tg.pushMessage({ chat: privateChat(user), from: user, text: `message ${token}` });
        await tg.waitFor(
          () => !sending || tokensTo(tg, user.id).includes(token),
          `${user.username}'s ${token}`,
        );
        // Traffic shaping, not a wait for anything: a person reads the answer before writing again.
        await faultDelay(random.int(50, 250));
      }
    };
    const killer = new OffThreadKiller();
    const killedAt: number[] = [];
    const readyAt: number[] = [];
    let gw: GatewayProcess = await state.startGateway();
    readyAt.push(absoluteNow());
    const loops = USERS.map((user) => talk(user));
    for (let kill = 0; kill < kills; kill++) {
      // The scenario's fault timing: a stretch of steady traffic, then the kill at an arbitrary moment in it
      // (timed off the main thread, where the fake Bot API answers: see OffThreadKiller).
      killedAt.push(await killer.killAfter(gw.pid, random.int(150, 900)));
      expect((await gw.exited).signal).toBe("SIGKILL");
      gw = await state.startGateway();
      readyAt.push(absoluteNow());
    }
    await killer.close();
    sending = false;
    await Promise.all(loops);
    const expected = USERS.flatMap((u) => sent.get(u.id)!);
    await tg
      .waitFor(
        () =>
          audit(
            expected,
            USERS.flatMap((u) => tokensTo(tg, u.id)),
          ).lost.length === 0,
        "every message answered after the last restart",
        { timeoutMs: 60_000 },
      )
      .catch((error: unknown) => {
        const { lost } = audit(
          expected,
          USERS.flatMap((u) => tokensTo(tg, u.id)),
        );
        throw new Error(
          `${String(error)}; not answered: ${lost.join(", ")}; the gateway wrote:\n${gw.stderr.tail()}`,
        );
      });
    await gw.stop();
    const { lost, twice } = audit(
      expected,
      USERS.flatMap((u) => tokensTo(tg, u.id)),
    );
    expect(lost).toEqual([]);
    const duplicates = Object.values(twice).reduce((sum, n) => sum + n - 1, 0);
    const { answeredBeforeKill, takenAfterKill } = splitTwice(
      twice,
      (token) => firstTaken(tg, token),
      killedAt,
      readyAt,
    );
    // Printed for the record: the rate the soak measures, and what the Bot API knew at each kill.
    console.log(
      `telegram kill -9: ${kills} kills, ${expected.length} messages, ${duplicates} replies twice: ` +
        `${answeredBeforeKill.length} answered before the kill (${answeredBeforeKill.join(", ")}), ` +
        `${takenAfterKill.length} taken by the Bot API after its sender was killed (${takenAfterKill.join(", ")})`,
    );
    // The target (issue 30) is the window between the Bot API's answer and the gateway's record of it: at most 1
    // per 100 kills answered before the kill, checked by the soak. A request the Bot API took only after its sender
    // died is sent again by any gateway (nothing tells it the first one went through), so it is counted, not bounded.
    // Eight kills cannot show a rate that low without failing by chance, so a normal run checks that nothing is lost
    // and bounds all duplicates loosely, at one per two kills.
    if (SOAK) expect(answeredBeforeKill.length).toBeLessThanOrEqual(Math.ceil(kills / 100));
    else expect(duplicates).toBeLessThanOrEqual(Math.ceil(kills / 2));
  });
});
