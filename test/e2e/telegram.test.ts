import { existsSync } from "node:fs";
import { readFile, stat } from "node:fs/promises";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { cleanupAll } from "./harness.js";
import { ALICE, BOB, GROUP, privateChat, STRANGER, telegramE2e } from "./telegram-harness.js";

/**
 * The Telegram transport through the real `clawdis gateway`, real grammY and a fake Bot API server on 127.0.0.1:
 * private chats, strangers, groups, long replies, Markdown, media, typing, and Telegram's errors (409, 429, 400).
 */
describe("e2e: Telegram through the real gateway", () => {
  afterEach(cleanupAll);

  const echoes = (texts: string[]) => texts.filter((t) => t.startsWith("echo: "));

  it("two allowed users' private chats share main, and each reply reaches its own chat", async () => {
    const { state, tg } = await telegramE2e();
    const gw = await state.startGateway();
    await tg.waitFor(() => tg.polling, "the first long poll");
    tg.pushMessage({ chat: privateChat(ALICE), from: ALICE, text: "hello from alice" });
    await tg.waitFor(() => tg.textsTo(ALICE.id).length === 1, "alice's reply");
    tg.pushMessage({ chat: privateChat(BOB), from: BOB, text: "hello from bob" });
    await tg.waitFor(() => tg.textsTo(BOB.id).length === 1, "bob's reply");
    expect(tg.textsTo(ALICE.id)).toEqual(["echo: hello from alice"]);
    // Two people in main: the model is told who wrote each message (the fake echoes the last one it was sent).
    expect(tg.textsTo(BOB.id)).toEqual(["echo: Bob: hello from bob"]);
    const seen = state.fake.requests[1]?.body.messages.filter((m) => m.role === "user").map((m) => m.content);
    expect(seen).toEqual(["Alice: hello from alice", "Bob: hello from bob"]);
    // Private replies are not quoted; a typing indicator ran for each turn.
    expect(tg.sent.every((m) => m.replyToMessageId === undefined)).toBe(true);
    expect(tg.chatActions).toEqual(
      expect.arrayContaining([
        { chatId: String(ALICE.id), action: "typing" },
        { chatId: String(BOB.id), action: "typing" },
      ]),
    );
    const store = await state.readStore();
    expect(Object.keys(store)).toEqual(["main"]);
    const texts = (await state.messages(store.main!.sessionId)).map((m) => m.message.content);
    expect(texts).toEqual([
      "hello from alice",
      "echo: hello from alice",
      "hello from bob",
      "echo: Bob: hello from bob",
    ]);
    // Each reply was recorded on the send thread the moment the Bot API took it (docs/runtime.md).
    await gw.stop();
    const confirmed = await readFile(join(state.dir, "journal", "inbound.confirmed.jsonl"), "utf8");
    const records = confirmed
      .trim()
      .split("\n")
      .map((line) => JSON.parse(line) as { op: string; outcome?: string });
    expect(records.map((r) => `${r.op} ${r.outcome}`)).toEqual(["end replied", "end replied"]);
  });

  it("a stranger gets nothing, costs no model call and no write, and the log says how to allow them", async () => {
    const { state, tg } = await telegramE2e();
    const gw = await state.startGateway();
    await tg.waitFor(() => tg.polling, "the first long poll");
    const id = tg.pushMessage({ chat: privateChat(STRANGER), from: STRANGER, text: "let me in" });
    await gw.stderr.waitFor(/sender 999 \(@eve\) is not in telegram\.allowFrom; add 999/);
    await tg.waitFor(() => tg.confirmedBelow > id, "the stranger's update confirmed");
    expect(tg.sent).toEqual([]);
    expect(state.fake.requests).toHaveLength(0);
    const journal = join(state.dir, "journal", "inbound.jsonl");
    expect(existsSync(journal) ? await readFile(journal, "utf8") : "").not.toContain("let me in");
    expect(existsSync(state.storePath)).toBe(false);
  });

  it("a group mention goes to group:<id>; an unmentioned message is not answered but is context for the next mention", async () => {
    const { state, tg } = await telegramE2e();
    await state.startGateway();
    await tg.waitFor(() => tg.polling, "the first long poll");
    const quiet = tg.pushMessage({ chat: GROUP, from: ALICE, text: "the sky is green today" });
    await tg.waitFor(() => tg.confirmedBelow > quiet, "the unmentioned update taken");
    const text = "@clawdis_test_bot what did alice say?";
    tg.pushMessage({
      chat: GROUP,
      from: BOB,
      text,
      entities: [{ type: "mention", offset: 0, length: "@clawdis_test_bot".length }],
    });
    const reply = await tg.waitFor(
      () => tg.sent.find((m) => m.chatId === String(GROUP.id)),
      "the group reply",
    );
    // The model reads who said what in groups.
    expect(tg.textsTo(GROUP.id)).toEqual([`echo: Bob: ${text}`]);
    // In groups the reply quotes the message that asked (Bob's, the second message of this chat).
    const asked = tg.callsOf("sendMessage")[0]!;
    expect(asked.params.reply_parameters).toMatchObject({ message_id: reply.messageId - 1 });
    expect(state.fake.requests).toHaveLength(1);
    const prompt = JSON.stringify(state.fake.requests[0]!.body.messages);
    expect(prompt).toContain("Alice");
    expect(prompt).toContain("the sky is green today");
    const store = await state.readStore();
    expect(Object.keys(store)).toEqual([`group:${GROUP.id}`]);
    // `/cmd@bot` addresses the bot too, and works as the chat command.
    tg.pushMessage({
      chat: GROUP,
      from: ALICE,
      text: "/status@clawdis_test_bot",
      entities: [{ type: "bot_command", offset: 0, length: 24 }],
    });
    const status = await tg.waitFor(
      () => tg.textsTo(GROUP.id).find((t) => t.includes("telegram")),
      "the /status answer in the group",
    );
    expect(status).toMatch(/^telegram ok: @clawdis_test_bot; long polling; last poll \d+s ago/m);
    expect(status).toContain("privacy mode on");
    // A group sees no local path and no endpoint URL (a direct chat does).
    expect(status).not.toContain(state.dir);
    expect(status).not.toContain("Store:");
    expect(status).not.toContain(state.fake.url);
    expect(status).toMatch(/^Model: fake-model — /m);
  });

  it("a 10,000-character reply arrives whole, in order, in chunks of at most 4096", async () => {
    const { state, tg } = await telegramE2e();
    await state.startGateway();
    await tg.waitFor(() => tg.polling, "the first long poll");
    const paragraphs = Array.from({ length: 40 }, (_, i) => `Paragraph ${i}: ${"word ".repeat(48).trim()}.`);
    const long = paragraphs.join("\n\n");
    expect(long.length).toBeGreaterThan(10_000);
    state.fake.enqueue({ text: long });
    tg.pushMessage({ chat: privateChat(ALICE), from: ALICE, text: "write a lot" });
    await tg.waitFor(() => tg.textsTo(ALICE.id).join("\n\n").includes("Paragraph 39"), "the last chunk");
    const chunks = tg.textsTo(ALICE.id);
    expect(chunks.length).toBeGreaterThanOrEqual(3);
    for (const chunk of chunks) expect(chunk.length).toBeLessThanOrEqual(4096);
    expect(chunks.join("\n\n")).toBe(long);
  });

  it("Markdown is sent as Telegram HTML; refused entities are sent again as clean plain text", async () => {
    const { state, tg } = await telegramE2e();
    await state.startGateway();
    await tg.waitFor(() => tg.polling, "the first long poll");
    state.fake.enqueue({ text: "**bold** and `a < b`" });
    tg.pushMessage({ chat: privateChat(ALICE), from: ALICE, text: "format" });
    await tg.waitFor(() => tg.sent.length === 1, "the formatted reply");
    expect(tg.sent[0]).toMatchObject({
      parseMode: "HTML",
      raw: "<b>bold</b> and <code>a &lt; b</code>",
      text: "bold and a < b",
    });

    tg.failNext("sendMessage", {
      status: 400,
      description: "Bad Request: can't parse entities: Unsupported start tag",
    });
    state.fake.enqueue({ text: "**again** _here_" });
    tg.pushMessage({ chat: privateChat(ALICE), from: ALICE, text: "format again" });
    await tg.waitFor(() => tg.sent.length === 2, "the plain-text resend");
    expect(tg.sent[1]).toMatchObject({ text: "again here", raw: "again here" });
    expect(tg.sent[1]!.parseMode).toBeUndefined();
  });

  it("429 with retry_after: the reply is delivered once, late rather than never", async () => {
    const { state, tg } = await telegramE2e();
    await state.startGateway();
    await tg.waitFor(() => tg.polling, "the first long poll");
    tg.failNext("sendMessage", {
      status: 429,
      description: "Too Many Requests: retry after 1",
      retryAfter: 1,
    });
    tg.pushMessage({ chat: privateChat(ALICE), from: ALICE, text: "rate limited" });
    await tg.waitFor(() => tg.textsTo(ALICE.id).length === 1, "the late reply");
    const attempts = tg.callsOf("sendMessage");
    expect(attempts).toHaveLength(2);
    expect(tg.textsTo(ALICE.id)).toEqual(["echo: rate limited"]);
  });

  it("409 is reported once with what to do, retried with backoff, and polling recovers", async () => {
    const { state, tg } = await telegramE2e();
    tg.failNext(
      "getUpdates",
      {
        status: 409,
        description:
          "Conflict: terminated by other getUpdates request; make sure that only one bot instance is running",
      },
      2,
    );
    const gw = await state.startGateway();
    await tg.waitFor(() => tg.callsOf("getUpdates").length >= 3 && tg.polling, "polling after the conflict");
    expect(gw.stderr.text().match(/Telegram says 409/g)).toHaveLength(1);
    expect(gw.stderr.text()).toContain("Stop the other one");
    tg.pushMessage({ chat: privateChat(ALICE), from: ALICE, text: "after the conflict" });
    await tg.waitFor(() => tg.textsTo(ALICE.id).length === 1, "the reply");
    expect(echoes(tg.textsTo(ALICE.id))).toEqual(["echo: after the conflict"]);
  });

  it("a photo is downloaded into the session's workspace and described to the model", async () => {
    const { state, tg } = await telegramE2e();
    await state.startGateway();
    await tg.waitFor(() => tg.polling, "the first long poll");
    const bytes = Buffer.from("not really a jpeg");
    tg.addFile("photo-1", "photos/file_1.jpg", bytes);
    tg.pushMessage({
      chat: privateChat(ALICE),
      from: ALICE,
      caption: "look at this",
      photo: { fileId: "photo-1", size: bytes.length },
    });
    await tg.waitFor(() => tg.textsTo(ALICE.id).length === 1, "the reply");
    const prompt = JSON.stringify(state.fake.requests[0]!.body.messages);
    expect(prompt).toContain("look at this");
    const saved = /saved at (inbox\/[^\]\\]+)/.exec(prompt)?.[1];
    expect(saved).toBeDefined();
    expect(await readFile(join(state.dir, "workspace", saved!), "utf8")).toBe("not really a jpeg");
    // The upload as it came stays in the session folder's attachment-staging/ (0700), beside the copy.
    const { sessionId } = (await state.readStore()).main!;
    const staging = join(state.dir, "sessions", sessionId, "attachment-staging");
    expect(await readFile(join(staging, saved!.slice("inbox/".length)), "utf8")).toBe("not really a jpeg");
    expect((await stat(staging)).mode & 0o777).toBe(0o700);
    expect(tg.callsOf("getFile")).toHaveLength(1);
  });
});
