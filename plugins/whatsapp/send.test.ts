import type { AnyMessageContent, MiscMessageGenerationOptions, WAMessage } from "@whiskeysockets/baileys";
import { describe, expect, it } from "vitest";
import { type SendDeps, sendWhatsapp } from "./send.js";

/** A sender that records what it was asked (Baileys' own `sendMessage` needs WhatsApp's server to settle). */
function recordingDeps(behaviour: (n: number) => Promise<WAMessage | undefined> = async () => undefined) {
  const calls: { jid: string; content: AnyMessageContent; options?: MiscMessageGenerationOptions }[] = [];
  const remembered: string[] = [];
  let ids = 0;
  const quoted: WAMessage = { key: { remoteJid: "g@g.us", id: "IN1", participant: "49@s.whatsapp.net" } };
  const deps: SendDeps = {
    sender: {
      sendMessage: (jid, content, options) => {
        calls.push({ jid, content, ...(options ? { options } : {}) });
        return behaviour(calls.length);
      },
    },
    newMessageId: () => `OUT${++ids}`,
    remember: (id) => remembered.push(id),
    quotable: (id) => (id === "IN1" ? quoted : undefined),
  };
  return { calls, remembered, deps, quoted };
}

const signal = new AbortController().signal;

describe("sendWhatsapp", () => {
  it("sends the text with an id chosen and remembered first, and answers with it", async () => {
    const { calls, remembered, deps } = recordingDeps();
    const result = await sendWhatsapp(
      deps,
      {
        channel: "whatsapp",
        chatId: "49@s.whatsapp.net",
        chatType: "direct",
        text: "hi",
        kind: "reply",
        replyToMessageId: "IN1",
      },
      signal,
    );
    expect(result).toEqual({ messageId: "OUT1" });
    expect(remembered).toEqual(["OUT1"]);
    // Direct chats are not quoted.
    expect(calls).toEqual([
      { jid: "49@s.whatsapp.net", content: { text: "hi" }, options: { messageId: "OUT1" } },
    ]);
  });

  it("quotes the message it answers in groups, on the first message only", async () => {
    const { calls, deps, quoted } = recordingDeps();
    await sendWhatsapp(
      deps,
      {
        channel: "whatsapp",
        chatId: "g@g.us",
        chatType: "group",
        text: "answer",
        kind: "reply",
        replyToMessageId: "IN1",
        attachments: [{ kind: "document", path: "/tmp/report.pdf" }],
      },
      signal,
    );
    expect(calls.map((c) => c.options?.quoted)).toEqual([quoted, undefined]);
  });

  it("sends images as images, audio as audio, voice as a voice note, anything else as a document", async () => {
    const { calls, deps } = recordingDeps();
    await sendWhatsapp(
      deps,
      {
        channel: "whatsapp",
        chatId: "49@s.whatsapp.net",
        text: "",
        kind: "reply",
        attachments: [
          { kind: "image", path: "/w/cat.png", mimeType: "image/png", caption: "a cat" },
          { kind: "audio", path: "/w/song.mp3" },
          { kind: "voice", path: "/w/note.ogg", mimeType: "audio/ogg; codecs=opus" },
          { kind: "document", path: "/w/report.pdf", mimeType: "application/pdf" },
          { kind: "other", path: "/w/data.bin" },
        ],
      },
      signal,
    );
    expect(calls.map((c) => c.content)).toEqual([
      { image: { url: "/w/cat.png" }, caption: "a cat", mimetype: "image/png" },
      { audio: { url: "/w/song.mp3" }, mimetype: "audio/mpeg", ptt: false },
      { audio: { url: "/w/note.ogg" }, mimetype: "audio/ogg; codecs=opus", ptt: true },
      { document: { url: "/w/report.pdf" }, mimetype: "application/pdf", fileName: "report.pdf" },
      { document: { url: "/w/data.bin" }, mimetype: "application/octet-stream", fileName: "data.bin" },
    ]);
  });

  it("rejects at once when the signal aborts, however long WhatsApp takes", async () => {
    const { deps } = recordingDeps(() => new Promise(() => {}));
    const controller = new AbortController();
    const sending = sendWhatsapp(
      deps,
      { channel: "whatsapp", chatId: "49@s.whatsapp.net", text: "hi", kind: "reply" },
      controller.signal,
    );
    controller.abort(new Error("send watchdog"));
    await expect(sending).rejects.toThrow("send watchdog");
  });

  it("says what WhatsApp said when it refuses, with a retry hint on a rate limit", async () => {
    const boom = Object.assign(new Error("rate-overlimit"), { output: { statusCode: 429 } });
    const { deps } = recordingDeps(() => Promise.reject(boom));
    const error = await sendWhatsapp(
      deps,
      { channel: "whatsapp", chatId: "49@s.whatsapp.net", text: "hi", kind: "reply" },
      signal,
    ).catch((e: unknown) => e);
    expect((error as Error).message).toBe("WhatsApp did not take the message (429: rate-overlimit)");
    expect((error as { retryAfterMs?: number }).retryAfterMs).toBe(5_000);
  });

  it("marks a refusal that cannot pass as permanent (400, 403, 404, 406), not a closed connection or a timeout", async () => {
    const cases: [number | undefined, string, boolean][] = [
      [403, "forbidden", true],
      [404, "item-not-found", true],
      [400, "bad-request", true],
      [406, "not-acceptable", true],
      [428, "Connection Closed", false],
      [408, "Timed Out", false],
      [500, "internal-server-error", false],
      [undefined, "socket hang up", false],
    ];
    for (const [statusCode, text, permanent] of cases) {
      const boom = Object.assign(new Error(text), statusCode ? { output: { statusCode } } : {});
      const { deps } = recordingDeps(() => Promise.reject(boom));
      const error = await sendWhatsapp(
        deps,
        { channel: "whatsapp", chatId: "g@g.us", text: "hi", kind: "reply" },
        signal,
      ).catch((e: unknown) => e);
      expect([text, (error as { permanent?: boolean }).permanent === true]).toEqual([text, permanent]);
    }
  });
});
