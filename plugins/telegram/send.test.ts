import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Api } from "grammy";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { silentLogger } from "../../src/core/logger.js";
import { routeConfirmation } from "../../src/runtime/send-thread/confirm-routes.js";
import { SendThread } from "../../src/runtime/send-thread/send-thread.js";
import { FakeTelegram } from "../../test/fakes/telegram-server.js";
import { fetchMedia } from "./fetch-media.js";
import { OffsetStore } from "./offset-store.js";
import { sendTelegram, TelegramSendError } from "./send.js";
import { telegramApi } from "./telegram-api.js";

/** send.ts and fetch-media.ts through real grammY against the fake Bot API server on 127.0.0.1. */
describe("sendTelegram and fetchMedia", () => {
  let tg: FakeTelegram;
  let api: Api;
  let dir: string;
  const signal = new AbortController().signal;
  beforeEach(async () => {
    tg = await FakeTelegram.start();
    api = telegramApi(tg.token, tg.url);
    dir = await mkdtemp(join(tmpdir(), "tg-send-"));
  });
  afterEach(async () => {
    await tg.close();
    await rm(dir, { recursive: true, force: true });
  });

  const reply = (text: string, extra: object = {}) => ({
    channel: "telegram",
    chatId: "7",
    text,
    kind: "reply" as const,
    ...extra,
  });

  it("sends Markdown as HTML, quoting the asker in groups only", async () => {
    const result = await sendTelegram(
      api,
      reply("**hi**", { chatType: "group", replyToMessageId: "12" }),
      signal,
    );
    expect(tg.sent[0]).toMatchObject({
      text: "hi",
      raw: "<b>hi</b>",
      parseMode: "HTML",
      replyToMessageId: 12,
    });
    expect(result).toEqual({ messageId: String(tg.sent[0]!.messageId) });
    await sendTelegram(api, reply("x", { chatType: "direct", replyToMessageId: "12" }), signal);
    expect(tg.sent[1]!.replyToMessageId).toBeUndefined();
  });

  it("resends refused entities as plain text, once", async () => {
    tg.failNext("sendMessage", { status: 400, description: "Bad Request: can't parse entities: bad" });
    await sendTelegram(api, reply("_a_ & **b**"), signal);
    expect(tg.sent).toHaveLength(1);
    expect(tg.sent[0]).toMatchObject({ raw: "a & b" });
    expect(tg.callsOf("sendMessage")).toHaveLength(2);
  });

  it("a 429 throws with retryAfterMs; another refusal says what Telegram said", async () => {
    tg.failNext("sendMessage", {
      status: 429,
      description: "Too Many Requests: retry after 3",
      retryAfter: 3,
    });
    const error = await sendTelegram(api, reply("x"), signal).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(TelegramSendError);
    expect((error as TelegramSendError).retryAfterMs).toBe(3000);
    expect((error as TelegramSendError).permanent).toBe(false);
    tg.failNext("sendMessage", { status: 403, description: "Forbidden: bot was blocked by the user" });
    const blocked = await sendTelegram(api, reply("x"), signal).catch((e: unknown) => e);
    expect(blocked).toMatchObject({
      message: "Telegram says 403: Forbidden: bot was blocked by the user (sending to chat 7)",
      permanent: true,
    });
  });

  it("marks only refusals that cannot pass as permanent: 400 chat not found and 403 yes, 5xx and 404 no", async () => {
    const failures: [number, string, boolean][] = [
      [400, "Bad Request: chat not found", true],
      [403, "Forbidden: bot was kicked from the group chat", true],
      [502, "Bad Gateway", false],
      [500, "Internal Server Error", false],
      [404, "Not Found", false],
    ];
    for (const [status, description, permanent] of failures) {
      tg.failNext("sendMessage", { status, description });
      const error = await sendTelegram(api, reply("x"), signal).catch((e: unknown) => e);
      expect([status, (error as TelegramSendError).permanent]).toEqual([status, permanent]);
    }
  });

  it("sends attachments: images as photos, other files as documents", async () => {
    const image = join(dir, "a.png");
    const doc = join(dir, "b.txt");
    await writeFile(image, "PNG");
    await writeFile(doc, "text");
    await sendTelegram(
      api,
      reply("files", {
        attachments: [
          { kind: "image", path: image, caption: "pic" },
          { kind: "document", path: doc, fileName: "b.txt" },
        ],
      }),
      signal,
    );
    expect(tg.sent.map((m) => [m.method, m.text, m.file?.bytes.toString()])).toEqual([
      ["sendMessage", "files", undefined],
      ["sendPhoto", "pic", "PNG"],
      ["sendDocument", "", "text"],
    ]);
  });

  it("confirms a message once, when the Bot API takes its last request and before the send returns; never a refusal", async () => {
    /** Per `confirmed` call: how many messages the Bot API held then, and whether the send had returned. */
    let returned = false;
    let calls: string[] = [];
    const confirmed = () => calls.push(`${tg.sent.length} sent, returned ${returned}`);
    const send = async (message: ReturnType<typeof reply>) => {
      returned = false;
      calls = [];
      await sendTelegram(api, message, signal, new Map(), confirmed);
      returned = true;
    };
    // Refused entities: the first request's 400 confirms nothing, the plain-text resend does.
    tg.failNext("sendMessage", { status: 400, description: "Bad Request: can't parse entities: bad" });
    await send(reply("_a_ & **b**"));
    expect(calls).toEqual(["1 sent, returned false"]);
    // A text with files, closing the chat's buttons first: only the last file's answer confirms.
    const buttons = new Map([["7", 99]]);
    const doc = join(dir, "c.txt");
    await writeFile(doc, "text");
    returned = false;
    calls = [];
    await sendTelegram(
      api,
      reply("files", {
        closesButtons: true,
        attachments: [
          { kind: "document", path: doc },
          { kind: "document", path: doc },
        ],
      }),
      signal,
      buttons,
      confirmed,
    );
    expect(tg.callsOf("editMessageReplyMarkup")).toHaveLength(1);
    expect(calls).toEqual(["4 sent, returned false"]);
    // Refusals, for good or for now, confirm nothing.
    for (const status of [403, 502]) {
      tg.failNext("sendMessage", { status, description: "no" });
      await expect(send(reply("refused"))).rejects.toThrow(TelegramSendError);
      expect(calls).toEqual([]);
    }
  });

  it("with the core's send thread, a text's answer is recorded there first; a refusal writes nothing, a file goes from this thread", async () => {
    const confirmations = join(dir, "inbound.confirmed.jsonl");
    const thread = new SendThread({ confirmationsPath: confirmations, logger: silentLogger });
    expect(await thread.ready).toBe(true);
    try {
      let calls = 0;
      const confirmed = () => {
        calls++;
      };
      routeConfirmation(confirmed, { thread, lines: () => "recorded\n", recorded: () => Promise.resolve() });
      const read = async () => readFile(confirmations, "utf8").catch(() => "");
      await sendTelegram(api, reply("**hi**"), signal, new Map(), confirmed);
      expect(tg.sent.map((m) => m.raw)).toEqual(["<b>hi</b>"]);
      expect([calls, await read()]).toEqual([1, "recorded\n"]);
      tg.failNext("sendMessage", { status: 403, description: "Forbidden: bot was blocked by the user" });
      await expect(sendTelegram(api, reply("no"), signal, new Map(), confirmed)).rejects.toThrow(
        TelegramSendError,
      );
      expect([calls, await read()]).toEqual([1, "recorded\n"]);
      // A file is a stream body: sent from this thread, confirmed here.
      const doc = join(dir, "d.txt");
      await writeFile(doc, "text");
      await sendTelegram(
        api,
        reply("", { attachments: [{ kind: "document", path: doc }] }),
        signal,
        new Map(),
        confirmed,
      );
      expect([calls, await read()]).toEqual([2, "recorded\n"]);
    } finally {
      await thread.close();
    }
  });

  it("downloads a file into the staging dir, and refuses one over the limit with a note", async () => {
    tg.addFile("f1", "docs/f1.pdf", Buffer.from("%PDF"));
    const options = { api, token: tg.token, apiRoot: tg.url, stagingDir: dir, maxBytes: 100, signal };
    const got = await fetchMedia({ kind: "document", fileId: "f1", fileName: "r.pdf" }, options);
    expect(got).toMatchObject({ kind: "document", fileName: "r.pdf", sizeBytes: 4 });
    expect(await readFile(got.path!, "utf8")).toBe("%PDF");
    const big = await fetchMedia({ kind: "image", fileId: "f1", sizeBytes: 101 }, options);
    expect(big).toEqual({
      kind: "image",
      sizeBytes: 101,
      note: "not downloaded: larger than telegram.mediaMaxMb (0 MB)",
    });
    tg.addFile("f2", "docs/f2.bin", Buffer.alloc(200));
    const unknownSize = await fetchMedia({ kind: "document", fileId: "f2" }, options);
    expect(unknownSize.path).toBeUndefined();
    expect(unknownSize.note).toMatch(/larger than telegram\.mediaMaxMb/);
    const missing = await fetchMedia({ kind: "document", fileId: "nope" }, options);
    expect(missing.note).toMatch(/^not downloaded: /);
    expect(missing.note).not.toContain(tg.token);
  });
});

describe("OffsetStore", () => {
  it("reads back what it wrote, 0600; a missing or foreign file is no offset", async () => {
    const dir = await mkdtemp(join(tmpdir(), "tg-offset-"));
    const store = new OffsetStore(dir);
    expect(await store.read()).toBeUndefined();
    await store.write(1234);
    expect(await store.read()).toBe(1234);
    const { stat } = await import("node:fs/promises");
    expect((await stat(store.path)).mode & 0o777).toBe(0o600);
    await writeFile(store.path, "garbage");
    expect(await store.read()).toBeUndefined();
    await rm(dir, { recursive: true, force: true });
  });
});
