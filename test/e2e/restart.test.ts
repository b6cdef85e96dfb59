import { afterEach, describe, expect, it } from "vitest";
import { cleanupAll, contentOf, E2eState, type GatewayProcess } from "./harness.js";

/**
 * Accepted input survives the process: a gateway killed (SIGKILL) or stopped (SIGTERM) in the middle of a turn
 * answers the message after the next start, exactly once. Each test has its own state dir and fake.
 */
describe("e2e: crash and stop in the middle of a turn", () => {
  afterEach(cleanupAll);

  /** Waits, on a freshly started gateway, until the replayed turn has delivered its reply. */
  async function awaitReplay(state: E2eState, gw: GatewayProcess, requestNumber: number): Promise<void> {
    const events = await gw.events("main");
    try {
      await state.fake.waitForRequest(requestNumber);
      state.fake.release();
      await events.waitFor((e) => e.type === "message" && e.data.role === "assistant", "the replayed reply");
    } finally {
      events.close();
    }
  }

  it("SIGKILL during a turn: after a restart the message is answered exactly once, and never again", async () => {
    const state = await E2eState.create({ allowFrom: ["alice"] });
    const { fake } = state;
    const first = await state.startGateway();
    fake.enqueue({ hang: "before-headers", text: "an answer that dies with the process" });
    const accepted = await first.echo({
      chatId: "chat-crash",
      senderId: "alice",
      text: "survive this",
      messageId: "crash-1",
    });
    expect(accepted).toEqual({ status: 202, body: { status: "accepted" } });
    await fake.waitForRequest(1);
    expect((await first.kill()).signal).toBe("SIGKILL");
    await fake.waitForAbort(1);

    // Restart: the replayed request hangs too, so that the test can subscribe before letting it finish.
    fake.enqueue({ hang: "before-headers", text: "the answer after the crash" });
    const second = await state.startGateway();
    expect(second.stderr.text()).toMatch(/finishing messages accepted before the last stop.*count=1/);
    await awaitReplay(state, second, 2);

    const outbox = await second.outbox();
    expect(outbox.map((o) => [o.chatId, o.text, o.kind, o.replyToMessageId])).toEqual([
      ["chat-crash", "the answer after the crash", "reply", "crash-1"],
    ]);
    // The replayed request carried the person's message once.
    const asked = fake.requests[1]?.body.messages.filter((m) => m.role === "user").map((m) => m.content);
    expect(asked).toEqual(["survive this"]);
    const sessionId = (await state.readStore()).main?.sessionId ?? "";
    const messages = await state.messages(sessionId);
    expect(messages.map((m) => [m.message.role, contentOf(m)])).toEqual([
      ["user", "survive this"],
      ["assistant", "the answer after the crash"],
    ]);
    // A transport that retries the same message now gets "duplicate", not a second answer.
    const retry = await second.echo({
      chatId: "chat-crash",
      senderId: "alice",
      text: "survive this",
      messageId: "crash-1",
    });
    expect(retry).toEqual({ status: 200, body: { status: "duplicate" } });

    // A second restart finds nothing left to do. (soft: a failed graceful stop is reported, the rest still runs)
    expect.soft(await second.stop(), second.stderr.tail()).toEqual({ code: 0, signal: null });
    const third = await state.startGateway();
    expect(third.stderr.text()).not.toMatch(/finishing messages accepted/);
    const status = await third.call("GET", "/api/status");
    expect(status.body.openJournalRecords).toBe(0);
    expect(await third.outbox()).toEqual([]);
    expect(fake.requests).toHaveLength(2);
    expect((await state.messages(sessionId)).length).toBe(2);
  });

  it("SIGTERM during a turn: exits 0 in time, tells the person it is stopping, answers after the next start", async () => {
    const state = await E2eState.create({ allowFrom: ["alice"] });
    const { fake } = state;
    const first = await state.startGateway();
    fake.enqueue({ hang: "before-headers", text: "never sent" });
    const waiting = first
      .echo(
        { chatId: "chat-stop", senderId: "alice", text: "answer me later", messageId: "stop-1" },
        { wait: true },
      )
      .catch((error: unknown) => error);
    await fake.waitForRequest(1);

    const exit = await first.stop();
    await fake.waitForAbort(1);
    // soft: each of these is reported, and the restart below is still checked.
    expect.soft(exit, first.stderr.tail()).toEqual({ code: 0, signal: null });
    expect.soft(first.stderr.text()).toMatch(/INFO stopped/);
    const told = await waiting;
    expect.soft(told, "the ?wait=1 request should get the outcome, not a broken connection").toMatchObject({
      status: 200,
      body: { outcome: { stopReason: "aborted", payloads: [{ text: expect.stringMatching(/stopping/i) }] } },
    });

    fake.enqueue({ hang: "before-headers", text: "the answer after the stop" });
    const second = await state.startGateway();
    await awaitReplay(state, second, 2);
    expect((await second.outbox()).map((o) => [o.chatId, o.text, o.kind])).toEqual([
      ["chat-stop", "the answer after the stop", "reply"],
    ]);
    const sessionId = (await state.readStore()).main?.sessionId ?? "";
    expect((await state.messages(sessionId)).map(contentOf)).toEqual([
      "answer me later",
      "the answer after the stop",
    ]);
  });
});
