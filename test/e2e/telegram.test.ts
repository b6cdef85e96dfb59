import { afterEach, describe, expect, it } from "vitest";
import { cleanupAll } from "./harness.js";
import { ALICE, BOB, privateChat, STRANGER, telegramE2e } from "./telegram-harness.js";

describe("e2e: Telegram through the real gateway", () => {
  afterEach(cleanupAll);

  it("two allowed users' private chats share main, and each reply reaches its own chat", async () => {
    const { state, tg } = await telegramE2e();
    const gw = await state.startGateway();
    await tg.waitFor(() => tg.polling, "the first long poll");
    tg.pushMessage({ chat: privateChat(ALICE), from: ALICE, text: "hello from alice" });
    await tg.waitFor(() => tg.textsTo(ALICE.id).length === 1, "alice's reply");
    tg.pushMessage({ chat: privateChat(BOB), from: BOB, text: "hello from bob" });
    await tg.waitFor(() => tg.textsTo(BOB.id).length === 1, "bob's reply");
    expect(tg.textsTo(ALICE.id)).toEqual(["echo: hello from alice"]);
    expect(tg.textsTo(BOB.id)).toEqual(["echo: hello from bob"]);
    const store = await state.readStore();
    expect(Object.keys(store)).toEqual(["main"]);
    const texts = (await state.messages(store.main!.sessionId)).map((m) => m.message.content);
    expect(texts).toEqual(["hello from alice", "echo: hello from alice", "hello from bob", "echo: hello from bob"]);
    void gw;
    void STRANGER;
  });
});
