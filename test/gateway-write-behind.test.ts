import { readFile } from "node:fs/promises";
import { afterEach, describe, expect, it } from "vitest";
import { done, startTestGateway, type TestGateway } from "./helpers/gateway-harness.js";

/**
 * The store update after a turn is written behind (docs/runtime.md, "The store update after a turn"): the reply
 * does not wait for it, it shares one rewrite of sessions.json with the turns that follow, and whatever reads the
 * session's entry next in this gateway (its next turn, /status) finds it.
 */
describe("gateway: the store update after a turn is written behind", () => {
  let t: TestGateway | undefined;
  afterEach(async () => {
    await t?.close();
    t = undefined;
  });

  const onDisk = async () =>
    JSON.parse(await readFile(t!.gateway.store.path, "utf8")) as Record<
      string,
      { sessionId: string; lastInteractionAt?: number; inputTokens?: number }
    >;

  it("the reply goes out before the update is written; the session's next turn decides on it", async () => {
    t = await startTestGateway({ config: { inbound: { reply: { session: { idleMinutes: 1 } } } } });
    await done(await t.chat.inject({ text: "one" }));
    await t.idle();
    const first = (await onDisk()).main!;
    // 59.99 s later: the session goes on (60 s is the limit), and this turn's exchange is the new last one.
    t.clock.advance(59_990);
    await done(await t.chat.inject({ text: "two" }));
    expect(t.chat.textsTo("c-alice").at(-1)).toBe("echo: two");
    // The reply is out and the update still waits to share a write (the clock has not moved since).
    expect(t.gateway.store.waitingUpdates).toBe(1);
    expect((await onDisk()).main!.lastInteractionAt).toBe(first.lastInteractionAt);
    // 15 ms later, before the update's quiet time is up: from the file as it is, more than 60 s passed since the
    // last exchange; from the turn just ended, 15 ms. The next turn decides on the latter.
    t.clock.advance(15);
    await done(await t.chat.inject({ text: "three" }));
    const texts = t.chat.textsTo("c-alice");
    expect(texts.at(-1)).toBe("echo: three");
    expect(texts.some((text) => text.includes("A new session began"))).toBe(false);
    await t.idle();
    const after = (await onDisk()).main!;
    expect(after.sessionId).toBe(first.sessionId);
    expect(after.lastInteractionAt).toBeGreaterThan(first.lastInteractionAt!);
  });

  it("turns of several sessions share one rewrite; /status shows the turn's usage at once", async () => {
    t = await startTestGateway({ config: { inbound: { groupChat: { requireMention: false } } } });
    const chats = ["c-1", "c-2", "c-3"];
    const say = async (text: string) => {
      for (const chat of chats) await done(await t!.chat.inject({ text, chatId: chat, chatType: "group" }));
    };
    // The first message of each group makes its entry (a prompt write, carrying along what waits).
    await say("hello");
    await t.idle();
    const before = await readFile(t.gateway.store.path, "utf8");
    const tokensBefore = JSON.parse(before) as Record<string, { inputTokens?: number }>;
    await say("again");
    expect(t.gateway.store.waitingUpdates).toBe(3);
    expect(await readFile(t.gateway.store.path, "utf8")).toBe(before);
    const status = await done(await t.chat.inject({ text: "/status", chatId: "c-1", chatType: "group" }));
    expect(t.gateway.store.waitingUpdates).toBe(0);
    const stored = (await onDisk()) as Record<string, { inputTokens?: number; contextTokens?: number }>;
    const groups = Object.keys(stored).filter((key) => key.startsWith("group:"));
    expect(groups).toHaveLength(3);
    // Every group's second turn is in the file (one rewrite took all three), and /status shows its context.
    for (const key of groups) {
      expect(stored[key]!.inputTokens).toBeGreaterThan(tokensBefore[key]!.inputTokens!);
    }
    const c1 = groups.find((key) => key.endsWith("c-1"))!;
    expect(status.payloads[0]!.text).toContain(`Context: ${stored[c1]!.contextTokens}/128k tokens`);
  });
});
