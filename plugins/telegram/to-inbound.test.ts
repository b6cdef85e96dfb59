import type { Update } from "grammy/types";
import { describe, expect, it } from "vitest";
import { mentionsBot, toInbound } from "./to-inbound.js";

const bot = { id: 42, username: "claw_bot" };
const opts = { requireMention: true, receivedAt: 1000 };
const alice = { id: 7, is_bot: false, first_name: "Alice", last_name: "A", username: "alice" };
const group = { id: -100, type: "supergroup" as const, title: "g" };

function update(message: Record<string, unknown>, id = 555): Update {
  return {
    update_id: id,
    message: {
      message_id: 9,
      date: 1,
      chat: { id: 7, type: "private", first_name: "Alice" },
      from: alice,
      ...message,
    },
  } as unknown as Update;
}

describe("toInbound", () => {
  it("a private message: direct, the update id as dedupe key, the message id to quote", () => {
    expect(toInbound(update({ text: "hi" }), bot, opts)).toEqual({
      message: {
        channel: "telegram",
        chatId: "7",
        chatType: "direct",
        senderId: "7",
        senderName: "Alice A",
        messageId: "555",
        transportMessageId: "9",
        text: "hi",
        receivedAt: 1000,
      },
      username: "alice",
      files: [],
    });
  });

  it("a group message is a group; mentioned only when it addresses the bot", () => {
    expect(toInbound(update({ chat: group, text: "just talking" }), bot, opts)?.message).toMatchObject({
      chatType: "group",
      chatId: "-100",
      mentioned: false,
    });
    const mention = update({
      chat: group,
      text: "hey @claw_bot",
      entities: [{ type: "mention", offset: 4, length: 9 }],
    });
    expect(toInbound(mention, bot, opts)?.message.mentioned).toBe(true);
    const reply = update({
      chat: group,
      text: "and?",
      reply_to_message: {
        message_id: 3,
        date: 1,
        chat: group,
        from: { id: 42, is_bot: true, first_name: "Claw" },
        text: "earlier",
      },
    });
    expect(toInbound(reply, bot, opts)?.message).toMatchObject({
      mentioned: true,
      replyTo: { messageId: "3", text: "earlier", senderId: "42", fromAgent: true },
    });
    expect(
      toInbound(update({ chat: group, text: "anything" }), bot, { ...opts, requireMention: false })?.message
        .mentioned,
    ).toBe(true);
  });

  it("/cmd@bot addresses the bot and loses its @name", () => {
    const cmd = update({
      chat: group,
      text: "/status@claw_bot",
      entities: [{ type: "bot_command", offset: 0, length: 16 }],
    });
    expect(toInbound(cmd, bot, opts)?.message).toMatchObject({ text: "/status", mentioned: true });
    expect(toInbound(update({ text: "/status@other_bot" }), bot, opts)?.message.text).toBe(
      "/status@other_bot",
    );
  });

  it("media: the largest photo, documents, voice, with the caption as text", () => {
    const photo = update({
      caption: "look",
      photo: [
        { file_id: "small", file_unique_id: "s", width: 1, height: 1, file_size: 5 },
        { file_id: "big", file_unique_id: "b", width: 9, height: 9, file_size: 99 },
      ],
    });
    const out = toInbound(photo, bot, opts);
    expect(out?.message.text).toBe("look");
    expect(out?.files).toEqual([
      { kind: "image", fileId: "big", fileName: "photo-9.jpg", mimeType: "image/jpeg", sizeBytes: 99 },
    ]);
    const voice = toInbound(update({ voice: { file_id: "v", file_unique_id: "v", duration: 2 } }), bot, opts);
    expect(voice?.files).toEqual([
      { kind: "voice", fileId: "v", fileName: "voice-9.ogg", mimeType: "audio/ogg" },
    ]);
    const doc = toInbound(
      update({
        document: {
          file_id: "d",
          file_unique_id: "d",
          file_name: "a.pdf",
          mime_type: "application/pdf",
          file_size: 3,
        },
      }),
      bot,
      opts,
    );
    expect(doc?.files[0]).toMatchObject({ kind: "document", fileName: "a.pdf" });
  });

  it("ignores what clawdis does not answer: other bots, edits, empty service messages", () => {
    expect(
      toInbound(update({ text: "x", from: { id: 8, is_bot: true, first_name: "B" } }), bot, opts),
    ).toBeUndefined();
    expect(
      toInbound({ update_id: 1, edited_message: { message_id: 1 } } as unknown as Update, bot, opts),
    ).toBeUndefined();
    expect(toInbound(update({ new_chat_members: [] }), bot, opts)).toBeUndefined();
  });
});

describe("mentionsBot", () => {
  it.each([
    ["@claw_bot hi", [], true],
    ["hi @CLAW_BOT", [], true],
    ["mail me@claw_bot.org", [], false],
    ["@claw_botty", [], false],
    [
      "hello",
      [
        {
          type: "text_mention" as const,
          offset: 0,
          length: 5,
          user: { id: 42, is_bot: true, first_name: "C" },
        },
      ],
      true,
    ],
  ])("%s", (text, entities, expected) => {
    expect(mentionsBot(text, entities, bot)).toBe(expected);
  });
});

describe("toInbound: a button press", () => {
  const press = (data: string | undefined, chat: Record<string, unknown>, from = alice): Update =>
    ({
      update_id: 777,
      callback_query: {
        id: "cq-1",
        from,
        chat_instance: "x",
        ...(data !== undefined ? { data } : {}),
        message: { message_id: 12, date: 1, chat },
      },
    }) as unknown as Update;

  it("is the presser's message in that chat: its data as the text, the press's id to answer; in a group it addresses the bot", () => {
    expect(toInbound(press("/approve", group), bot, opts)).toEqual({
      message: {
        channel: "telegram",
        chatId: "-100",
        chatType: "group",
        senderId: "7",
        senderName: "Alice A",
        messageId: "777",
        text: "/approve",
        receivedAt: 1000,
        mentioned: true,
      },
      files: [],
      callbackQueryId: "cq-1",
      username: "alice",
    });
    expect(toInbound(press("/deny", { id: 7, type: "private" }), bot, opts)?.message).toMatchObject({
      chatType: "direct",
      text: "/deny",
    });
  });

  it("a press without data, or by a bot, is not a message", () => {
    expect(toInbound(press(undefined, group), bot, opts)).toBeUndefined();
    expect(toInbound(press("/approve", group, { ...alice, is_bot: true }), bot, opts)).toBeUndefined();
  });
});
