import { afterEach, describe, expect, it } from "vitest";
import { done, startTestGateway, type TestGateway } from "./helpers/gateway-harness.js";

/**
 * Passivation (docs/runtime.md, Memory): a session idle for `passivateAfterMinutes` is saved, then released
 * after a 5 s grace period; a message in the grace period keeps it; a running turn keeps it; the next message
 * loads it from disk. On the manual clock.
 */
describe("gateway: passivation of idle sessions", () => {
  let t: TestGateway;
  afterEach(async () => {
    await t?.close();
  });

  const start = () =>
    startTestGateway({ config: { inbound: { reply: { session: { passivateAfterMinutes: 1 } } } } });

  /** Moves the clock and lets a final save that it started finish. */
  async function advance(ms: number): Promise<void> {
    t.clock.advance(ms);
    await t.gateway.sessions.settled();
  }

  it("an idle session is held until the idle time, saved, released after the grace period, and loaded again", async () => {
    t = await start();
    await done(await t.chat.inject({ text: "remember the word kiwi" }));
    await t.idle();
    // Its second turn keeps the tail in memory (one used once holds none).
    await done(await t.chat.inject({ text: "and the word fig" }));
    await t.idle();
    const warm = t.gateway.sessions.peek("main");
    expect(warm?.tail?.entries.length).toBeGreaterThan(0);

    await advance(59_999);
    expect(t.gateway.sessions.peek("main")).toBe(warm);
    await advance(1); // idle for 60 s: the final save, then the grace period
    expect(t.gateway.sessions.peek("main")).toBe(warm);
    await advance(4_999);
    expect(t.gateway.sessions.peek("main")).toBe(warm);
    await advance(1);
    expect(t.gateway.sessions.peek("main")).toBeUndefined();
    expect(t.gateway.sessions.size).toBe(0);
    expect(
      t.logs.some(
        (l) => l.message === "idle session unloaded from memory" && l.fields?.sessionKey === "main",
      ),
    ).toBe(true);

    // The next message loads the session from disk: the model sees the earlier exchange.
    await done(await t.chat.inject({ text: "which word?" }));
    const request = t.fake.requests.at(-1)!.body.messages.map((m) => m.content);
    expect(request).toContain("remember the word kiwi");
    expect(request).toContain("echo: remember the word kiwi");
    await t.idle();
    expect(t.gateway.sessions.peek("main")).not.toBe(warm);
    // Loaded afresh: its first turn read the file and keeps no tail yet; the next one does.
    expect(t.gateway.sessions.peek("main")?.tail).toBeUndefined();
    await done(await t.chat.inject({ text: "and the other?" }));
    await t.idle();
    expect(t.gateway.sessions.peek("main")?.tail).toBeDefined();
  });

  it("a message during the grace period cancels the unloading", async () => {
    t = await start();
    await done(await t.chat.inject({ text: "one" }));
    await t.idle();
    const warm = t.gateway.sessions.peek("main");
    await advance(60_000); // saved; the grace period runs
    await advance(2_000);
    await done(await t.chat.inject({ text: "two" }));
    await t.idle();
    await advance(3_000); // past the end of the grace period
    expect(t.gateway.sessions.peek("main")).toBe(warm);
    // The idle time started over at the message: released a full period (and grace) later.
    await advance(57_000);
    expect(t.gateway.sessions.peek("main")).toBe(warm);
    await advance(3_000);
    await advance(5_000);
    expect(t.gateway.sessions.peek("main")).toBeUndefined();
  });

  it("a session with a running turn stays, however long the turn takes", async () => {
    t = await start();
    t.fake.enqueue({ text: "late answer", hang: "before-headers" });
    const outcome = done(await t.chat.inject({ text: "think long" }));
    await t.fake.waitForRequest(1);
    // Ten idle periods (each with a grace period), well under the prefill watchdog (1800 s).
    // 21 half periods: the turn ends in the middle of an idle period, which then counts from its end.
    for (let i = 0; i < 21; i++) {
      await advance(30_000);
      expect(t.gateway.sessions.peek("main")).toBeDefined();
    }
    t.fake.release();
    expect((await outcome).payloads).toEqual([{ text: "late answer" }]);
    await t.idle();
    // Idle from the end of the turn on.
    for (let i = 0; i < 11; i++) {
      await advance(5_000);
      expect(t.gateway.sessions.peek("main")).toBeDefined();
    }
    await advance(5_000); // 60 s after the turn: saved, the grace period runs
    await advance(5_000);
    expect(t.gateway.sessions.peek("main")).toBeUndefined();
  });

  it("passivateAfterMinutes 0: never released", async () => {
    t = await startTestGateway({ config: { inbound: { reply: { session: { passivateAfterMinutes: 0 } } } } });
    await done(await t.chat.inject({ text: "hi" }));
    await t.idle();
    await advance(24 * 60 * 60_000);
    expect(t.gateway.sessions.peek("main")).toBeDefined();
  });
});
