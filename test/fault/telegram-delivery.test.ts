import { mkdtemp, readdir, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { cleanupAll } from "../e2e/harness.js";
import { ALICE, BOB, privateChat, telegramE2e } from "../e2e/telegram-harness.js";
import type { FakeUser, InjectedError } from "../fakes/telegram-server.js";
import { audit, tokensTo } from "./telegram-tokens.js";

/**
 * Delivery to Telegram through the real `clawdis gateway` while the Bot API fails sends (reliability review C1,
 * M1, M2): a failure that passes never gives a reply up, a permanent refusal ends it where the log and `/status`
 * say so, a failed upload does not send the text again, and replies past the outbox's memory bound are all sent
 * by the running gateway once Telegram takes sends again. Every wait is on an event, with a deadline.
 */
describe("fault: Telegram sends failing", () => {
  afterEach(cleanupAll);

  const BAD_GATEWAY: InjectedError = { status: 502, description: "Bad Gateway" };
  const RATE_LIMIT: InjectedError = {
    status: 429,
    description: "Too Many Requests: retry after 1",
    retryAfter: 1,
  };
  const chatOf = (params: Record<string, unknown>) => String(params.chat_id);

  it("502 and 429 on sendMessage for longer than five tries, polling working: every reply delivered once, in order, none given up", {
    timeout: 90_000,
  }, async () => {
    const { state, tg } = await telegramE2e();
    const gw = await state.startGateway();
    await tg.waitFor(() => tg.polling, "the first long poll", { timeoutMs: 15_000 });
    // Alice's chat answers 502, Bob's 429 with retry_after 1, while getUpdates goes on as usual.
    const heal = tg.failWhile("sendMessage", (params) =>
      chatOf(params) === String(ALICE.id)
        ? BAD_GATEWAY
        : chatOf(params) === String(BOB.id)
          ? RATE_LIMIT
          : undefined,
    );
    const sent: Record<string, string[]> = { [ALICE.id]: [], [BOB.id]: [] };
    const say = (user: FakeUser, n: number) => {
      const token = `tok-${user.username?.slice(0, 3)}-${n}`;
      sent[user.id]!.push(token);
      tg.pushMessage({ chat: privateChat(user), from: user, text: `message ${token}` });
    };
    for (let n = 0; n < 3; n++) {
      say(ALICE, n);
      say(BOB, n);
    }
    // More failed tries of each chat's first reply than the five after which a reply used to be given up.
    await tg.waitFor(
      () => tg.failedCalls("sendMessage", ALICE.id) >= 6 && tg.failedCalls("sendMessage", BOB.id) >= 8,
      "six failed tries to Alice (502) and eight to Bob (429)",
      { timeoutMs: 60_000 },
    );
    expect(gw.stderr.text()).not.toMatch(/cannot be delivered|could not be delivered/);
    heal();
    await tg.waitFor(
      () =>
        audit([...sent[ALICE.id]!, ...sent[BOB.id]!], [...tokensTo(tg, ALICE.id), ...tokensTo(tg, BOB.id)])
          .lost.length === 0,
      "every reply after the outage",
      { timeoutMs: 45_000 },
    );
    for (const user of [ALICE, BOB]) {
      const got = tokensTo(tg, user.id);
      expect(audit(sent[user.id]!, got)).toEqual({ lost: [], twice: {} });
      // In order per chat: the tokens arrive as they were sent.
      expect(got).toEqual(sent[user.id]);
    }
    expect(gw.stderr.text()).not.toMatch(/cannot be delivered|could not be delivered/);
    await gw.stop();
    const journal = await readFile(join(state.dir, "journal", "inbound.jsonl"), "utf8");
    expect(journal).not.toContain("failed-told");
  });

  it("a permanent 403 ends that reply, logged with the chat and why, listed in /status; the chat's next reply goes out", async () => {
    const { state, tg } = await telegramE2e();
    const gw = await state.startGateway();
    await tg.waitFor(() => tg.polling, "the first long poll", { timeoutMs: 15_000 });
    const unblock = tg.failWhile("sendMessage", (params) =>
      chatOf(params) === String(ALICE.id)
        ? { status: 403, description: "Forbidden: bot was blocked by the user" }
        : undefined,
    );
    tg.pushMessage({ chat: privateChat(ALICE), from: ALICE, text: "tok-ali-0 are you there" });
    await gw.stderr.waitFor(
      /a reply to telegram chat 111 cannot be delivered \(Telegram says 403: Forbidden: bot was blocked by the user/,
    );
    expect(tg.failedCalls("sendMessage", ALICE.id)).toBe(1);
    tg.pushMessage({ chat: privateChat(BOB), from: BOB, text: "/status" });
    const status = await tg.waitFor(
      () => tg.textsTo(BOB.id).find((t) => t.includes("Not delivered")),
      "the /status reply to Bob",
      { timeoutMs: 15_000 },
    );
    expect(status).toMatch(
      /Not delivered: 1 reply refused by the chat — telegram chat 111, \d+s ago: Telegram says 403/,
    );
    unblock();
    tg.pushMessage({ chat: privateChat(ALICE), from: ALICE, text: "tok-ali-1 unblocked" });
    await tg.waitFor(() => tokensTo(tg, ALICE.id).includes("tok-ali-1"), "the reply after unblocking", {
      timeoutMs: 15_000,
    });
    expect(tokensTo(tg, ALICE.id)).toEqual(["tok-ali-1"]);
    await gw.stop();
    const journal = await readFile(join(state.dir, "journal", "inbound.jsonl"), "utf8");
    expect(journal).toMatch(/"outcome":"failed-told","reason":"the chat refused it: Telegram says 403/);
  });

  it("sendDocument failing once: the reply's text arrives once, the file once", async () => {
    const files = await mkdtemp(join(tmpdir(), "clawdis-tg-file-"));
    try {
      const report = join(files, "report.txt");
      await writeFile(report, "the quarterly numbers\n");
      const { state, tg } = await telegramE2e();
      await state.writeConfig(
        state.configFor({
          config: {
            telegram: { botToken: tg.token, apiRoot: tg.url, allowFrom: [ALICE.id] },
            inbound: { reply: { agent: { tools: { main: ["send_file"] } } } },
          },
        }),
      );
      state.fake.enqueue(
        { toolCalls: [{ name: "send_file", arguments: { path: report } }] },
        { text: "here is the report tok-ali-0" },
      );
      tg.failNext("sendDocument", BAD_GATEWAY);
      const gw = await state.startGateway();
      await tg.waitFor(() => tg.polling, "the first long poll", { timeoutMs: 15_000 });
      tg.pushMessage({ chat: privateChat(ALICE), from: ALICE, text: "send me the report" });
      await tg.waitFor(
        () => tg.sent.some((m) => m.method === "sendDocument"),
        "the document after its failed upload",
        { timeoutMs: 30_000 },
      );
      await gw.stop();
      expect(tg.callsOf("sendDocument")).toHaveLength(2);
      const toAlice = tg.sent.filter((m) => m.chatId === String(ALICE.id));
      expect(toAlice.map((m) => [m.method, m.text])).toEqual([
        ["sendMessage", "here is the report tok-ali-0"],
        ["sendDocument", ""],
      ]);
      expect(toAlice[1]!.file?.bytes.toString()).toBe("the quarterly numbers\n");
    } finally {
      await rm(files, { recursive: true, force: true });
    }
  });

  it("replies past the outbox's memory bound wait on disk and are all sent once Telegram takes sends again, without a restart", {
    timeout: 90_000,
  }, async () => {
    const { state, tg } = await telegramE2e();
    // A long reply each (the echo of a long message), and a bound of a few of them.
    const gw = await state.startGateway({ env: { CLAWDIS_OUTBOX_MEMORY_BYTES: "1500" } });
    await tg.waitFor(() => tg.polling, "the first long poll", { timeoutMs: 15_000 });
    const heal = tg.failWhile("sendMessage", () => BAD_GATEWAY);
    const sent: Record<string, string[]> = { [ALICE.id]: [], [BOB.id]: [] };
    const padding = "x".repeat(400);
    let turns = 0;
    for (let n = 0; n < 8; n++) {
      for (const user of [ALICE, BOB]) {
        const token = `tok-${user.username?.slice(0, 3)}-${n}`;
        sent[user.id]!.push(token);
        tg.pushMessage({ chat: privateChat(user), from: user, text: `${token} ${padding}` });
        // One turn each (none joins another): the next message is handed in once this one's model call ran.
        turns++;
        await state.fake.waitForRequest(turns);
      }
    }
    // Every turn ran, so every reply was handed to the outbox while no send went through.
    await tg.waitFor(() => tg.failedCalls("sendMessage") >= 2, "failed sends in both chats", {
      timeoutMs: 15_000,
    });
    heal();
    const all = [...sent[ALICE.id]!, ...sent[BOB.id]!];
    await tg.waitFor(
      () => audit(all, [...tokensTo(tg, ALICE.id), ...tokensTo(tg, BOB.id)]).lost.length === 0,
      "every reply, those on disk too",
      { timeoutMs: 60_000 },
    );
    for (const user of [ALICE, BOB]) {
      const got = tokensTo(tg, user.id);
      expect(audit(sent[user.id]!, got)).toEqual({ lost: [], twice: {} });
      expect(got).toEqual(sent[user.id]);
    }
    expect(gw.stderr.text()).not.toMatch(/kept in the journal and sent after the next start/);
    // The bound was passed: some of them waited on disk (and nothing is left there).
    expect(gw.stderr.text()).toContain("those past the memory bound wait on disk");
    await gw.stop();
    expect(await readdir(join(state.dir, "outbox"))).toEqual([]);
  });
});
