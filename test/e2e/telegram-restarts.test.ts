import { afterEach, describe, expect, it } from "vitest";
import { cleanupAll } from "./harness.js";
import { ALICE, privateChat, telegramE2e } from "./telegram-harness.js";

/**
 * Telegram across process lives, through the real `clawdis gateway`: restarts and a SIGKILL never answer an update
 * twice or lose one; a revoked token stops only Telegram; webhook mode refuses a wrong secret.
 */
describe("e2e: Telegram across restarts, bad tokens and webhooks", () => {
  afterEach(cleanupAll);

  const echoes = (texts: string[]) => texts.filter((t) => t.startsWith("echo: "));

  // Restarts are graceful (SIGTERM, what a service manager sends): a kill -9 at an arbitrary moment can land
  // between Telegram taking a reply and the journal recording it, the one window no gateway can close (Telegram has
  // no idempotent send); the kill while the model thinks is the next test.
  it("20 restarts with updates pending answer each update exactly once", { timeout: 180_000 }, async () => {
    const { state, tg } = await telegramE2e();
    const sent: string[] = [];
    for (let i = 0; i < 20; i++) {
      const gw = await state.startGateway();
      // Updates arrive while the gateway starts, polls, and is stopped or killed around them.
      sent.push(`message ${i}a`);
      tg.pushMessage({ chat: privateChat(ALICE), from: ALICE, text: `message ${i}a` });
      if (i % 2 === 0) await tg.waitFor(() => tg.callsOf("getUpdates").length > 0 && tg.polling, "a poll");
      sent.push(`message ${i}b`);
      tg.pushMessage({ chat: privateChat(ALICE), from: ALICE, text: `message ${i}b` });
      await gw.stop();
    }
    const last = await state.startGateway();
    await tg.waitFor(() => echoes(tg.textsTo(ALICE.id)).length >= sent.length, "every answer");
    await last.stop();
    const answers = echoes(tg.textsTo(ALICE.id));
    expect([...answers].sort()).toEqual(sent.map((t) => `echo: ${t}`).sort());
    expect(new Set(answers).size).toBe(answers.length);
    expect(tg.pending()).toEqual([]);
  });

  it("SIGKILL while the model thinks: answered exactly once after the restart, and never again", async () => {
    const { state, tg } = await telegramE2e();
    const first = await state.startGateway();
    await tg.waitFor(() => tg.polling, "the first long poll");
    state.fake.enqueue({ hang: "before-headers", text: "dies with the process" });
    tg.pushMessage({ chat: privateChat(ALICE), from: ALICE, text: "survive this" });
    await state.fake.waitForRequest(1);
    expect((await first.kill()).signal).toBe("SIGKILL");
    await state.fake.waitForAbort(1);

    const second = await state.startGateway();
    await tg.waitFor(() => tg.textsTo(ALICE.id).length === 1, "the answer after the restart");
    expect(tg.textsTo(ALICE.id)).toEqual(["echo: survive this"]);
    await second.stop();

    const third = await state.startGateway();
    await tg.waitFor(() => tg.polling, "the third run polls");
    tg.pushMessage({ chat: privateChat(ALICE), from: ALICE, text: "and now" });
    await tg.waitFor(() => tg.textsTo(ALICE.id).length === 2, "the next answer");
    expect(tg.textsTo(ALICE.id)).toEqual(["echo: survive this", "echo: and now"]);
    expect(state.fake.requests).toHaveLength(3);
    await third.stop();
  });

  it("401 stops only Telegram, with 'check telegram.botToken' in the log, /api/status and clawdis status", async () => {
    const { state, tg } = await telegramE2e({ botToken: "999:revoked" });
    const gw = await state.startGateway();
    await gw.stderr.waitFor(/Telegram says 401: Unauthorized — check telegram\.botToken/);
    const status = await gw.call<{ transports?: unknown }>("GET", "/api/status");
    expect(JSON.stringify(status.body)).toMatch(/telegram.*check telegram\.botToken/);
    const human = await state.cli(["status"]);
    expect(human.stdout).toMatch(
      /telegram\s+down\s+Telegram says 401: Unauthorized — check telegram\.botToken/,
    );
    const json = await state.cli(["status", "--json"]);
    const transports = (
      JSON.parse(json.stdout) as { gateway: { transports: { id: string; state: string }[] } }
    ).gateway.transports;
    const telegram = transports.find((t) => t.id === "telegram");
    expect(telegram?.state).toBe("down");
    expect(JSON.stringify(telegram)).toContain("check telegram.botToken");
    // The rest of the gateway keeps working.
    const answer = await gw.agent("still here?");
    expect(answer.body.payloads).toEqual([{ text: "echo: still here?" }]);
    expect(tg.callsOf("getUpdates")).toHaveLength(0);
  });

  it("webhook mode: setWebhook with the secret, a wrong secret is refused, the right one is answered", async () => {
    const setup = await telegramE2e();
    const { state, tg } = setup;
    await state.writeConfig(
      setup.config({
        telegram: {
          webhookUrl: "https://bot.example.org/telegram/webhook",
          webhookSecret: "s3cret-value",
        },
      }),
    );
    // The https:// URL is the reverse proxy's; it forwards to the gateway's webhookPath.
    tg.webhookProxy = `http://127.0.0.1:${state.port}/telegram/webhook`;
    const gw = await state.startGateway();
    await tg.waitFor(() => tg.webhook, "setWebhook");
    expect(tg.webhook).toEqual({
      url: "https://bot.example.org/telegram/webhook",
      secretToken: "s3cret-value",
    });
    const forged = tg.messageUpdate(privateChat(ALICE), ALICE, "forged");
    expect(await tg.postToWebhook(forged, "wrong")).toBe(401);
    // Same length as the real secret, one character off: refused by the full comparison, not by the length.
    expect("s3cret-valuf").toHaveLength("s3cret-value".length);
    expect(await tg.postToWebhook(forged, "s3cret-valuf")).toBe(401);
    expect(await tg.postToWebhook(forged, undefined)).toBe(401);
    expect(state.fake.requests).toHaveLength(0);
    const real = tg.messageUpdate(privateChat(ALICE), ALICE, "via webhook");
    expect(await tg.postToWebhook(real, "s3cret-value")).toBe(200);
    await tg.waitFor(() => tg.textsTo(ALICE.id).length === 1, "the webhook reply");
    expect(tg.textsTo(ALICE.id)).toEqual(["echo: via webhook"]);
    // Telegram redelivering the same update is recognized and not answered again.
    expect(await tg.postToWebhook(real, "s3cret-value")).toBe(200);
    const again = await gw.agent("sync point");
    expect(again.status).toBe(200);
    expect(tg.textsTo(ALICE.id)).toEqual(["echo: via webhook"]);
    expect(tg.callsOf("getUpdates")).toHaveLength(0);
  });
});
