import { mkdir, mkdtemp, readdir, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { ManualClock } from "../../src/core/clock.js";
import { defaultConfig } from "../../src/core/config-schema.js";
import type {
  GatewayEvent,
  InboundMessage,
  PluginContext,
  ReceiveResult,
} from "../../src/plugin-api/types.js";
import { FakeTelegram } from "../../test/fakes/telegram-server.js";
import type { TelegramConfig } from "./config.js";
import { telegramSchema } from "./config-schema.js";
import { type RuntimeOptions, TelegramRuntime } from "./telegram-runtime.js";

/** The runtime with real grammY, the fake Bot API server and real files; the gateway side is a recording context. */
async function setup(
  receive: (m: InboundMessage) => Promise<ReceiveResult>,
  extra: { allowFrom?: number[]; options?: Omit<RuntimeOptions, "token"> } = {},
) {
  const tg = await FakeTelegram.start();
  const dir = await mkdtemp(join(tmpdir(), "tg-runtime-"));
  const stagingDir = join(dir, "staging");
  await mkdir(stagingDir);
  const logs: string[] = [];
  const listeners: ((e: GatewayEvent) => void)[] = [];
  const log = (level: string) => (message: string) => logs.push(`${level} ${message}`);
  const logger = {
    debug: log("debug"),
    info: log("info"),
    warn: log("warn"),
    error: log("error"),
    child: () => logger,
  };
  const config: TelegramConfig = telegramSchema.parse({
    botToken: tg.token,
    apiRoot: tg.url,
    allowFrom: extra.allowFrom ?? [7],
  });
  const context = {
    id: "telegram",
    config,
    gatewayConfig: defaultConfig(),
    pluginStateDir: dir,
    stagingDir,
    logger,
    receive,
    onEvent: (listener: (e: GatewayEvent) => void) => {
      listeners.push(listener);
      return () => listeners.splice(listeners.indexOf(listener), 1);
    },
    http: { route: () => {} },
    fail: (error: unknown) => logs.push(`fail ${String(error)}`),
  } as unknown as PluginContext<TelegramConfig>;
  const runtime = new TelegramRuntime(context, { token: tg.token, ...extra.options });
  const emit = (e: GatewayEvent) => {
    for (const l of [...listeners]) l(e);
  };
  return { tg, dir, stagingDir, logs, runtime, emit };
}

/** `promise`, or a rejection naming `what` after `ms` (a deadline on a wait, never a sleep before a check). */
function within<T>(promise: Promise<T>, what: string, ms = 10_000): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`not within ${ms} ms: ${what}`)), ms);
  });
  return Promise.race([promise, deadline]).finally(() => clearTimeout(timer));
}

/** Receives recorded in order; `waitFor` resolves once a message with that text (or caption) was received. */
function recorder() {
  const seen: InboundMessage[] = [];
  const waiters: (() => void)[] = [];
  return {
    seen,
    receive: async (m: InboundMessage): Promise<ReceiveResult> => {
      seen.push(m);
      for (const wake of waiters.splice(0)) wake();
      return { status: "duplicate" };
    },
    waitFor(text: string): Promise<InboundMessage> {
      return within(
        new Promise((resolve) => {
          const check = () => {
            const found = seen.find((m) => m.text === text);
            if (found) resolve(found);
            else waiters.push(check);
          };
          check();
        }),
        `the message "${text}" handed in`,
      );
    },
  };
}

const alice = { id: 7, first_name: "Alice" };
const chat = { id: 7, type: "private" as const };
let cleanup: (() => Promise<void>) | undefined;
afterEach(async () => {
  await cleanup?.();
  cleanup = undefined;
});

describe("TelegramRuntime", () => {
  it("saves the offset only after receive resolved: an update whose receive threw comes again", async () => {
    const seen: string[] = [];
    let failOnce = true;
    const { tg, dir, runtime } = await setup(async (m) => {
      seen.push(m.messageId);
      if (failOnce) {
        failOnce = false;
        throw new Error("disk full");
      }
      return { status: "duplicate" };
    });
    cleanup = async () => {
      await runtime.stop();
      await tg.close();
      await rm(dir, { recursive: true, force: true });
    };
    await runtime.start(new AbortController().signal);
    const id = tg.pushMessage({ chat, from: alice, text: "keep me" });
    await tg.waitFor(() => seen.length === 2 && tg.confirmedBelow > id, "the second delivery confirmed");
    expect(seen).toEqual([String(id), String(id)]);
    expect(JSON.parse(await readFile(join(dir, "update-offset.json"), "utf8"))).toEqual({
      version: 1,
      offset: id + 1,
    });
  });

  it("runs typing from turn-start to turn-end for its own channel only", async () => {
    const { tg, dir, runtime, emit } = await setup(async () => ({ status: "duplicate" }));
    cleanup = async () => {
      await runtime.stop();
      await tg.close();
      await rm(dir, { recursive: true, force: true });
    };
    const base = { sessionKey: "main", turnId: "t1", journalId: "j", chatId: "7", ts: 0 };
    emit({ type: "turn-start", channel: "webchat", ...base, chatId: "w" });
    emit({ type: "turn-start", channel: "telegram", ...base });
    await tg.waitFor(() => tg.chatActions.length === 1, "typing");
    emit({ type: "turn-end", channel: "telegram", stopReason: "end", ...base });
    expect(tg.chatActions).toEqual([{ chatId: "7", action: "typing" }]);
  });

  it("a trickling download holds only its own chat; it times out alone and is handed in with the note", async () => {
    const clock = new ManualClock();
    const rec = recorder();
    const { tg, dir, stagingDir, runtime } = await setup(rec.receive, {
      allowFrom: [7, 8],
      options: { timers: clock },
    });
    cleanup = async () => {
      await runtime.stop();
      await tg.close();
      await rm(dir, { recursive: true, force: true });
    };
    await runtime.start(new AbortController().signal);
    // 10,000 bytes at one byte per 50 ms: it would take over 8 minutes.
    tg.addTricklingFile("slow-1", "documents/slow.pdf", Buffer.alloc(10_000, 1), 50);
    const docId = tg.pushMessage({
      chat,
      from: alice,
      caption: "the slow one",
      document: { fileId: "slow-1", fileName: "slow.pdf", mimeType: "application/pdf", size: 10_000 },
    });
    await within(
      tg.waitFor(() => tg.trickles.length === 1, "the download begun"),
      "the download begun",
    );
    // Alice's next message waits behind her document; Bob's, in another chat, does not.
    tg.pushMessage({ chat, from: alice, text: "after my document" });
    const bob = { id: 8, first_name: "Bob" };
    const bobId = tg.pushMessage({ chat: { id: 8, type: "private" }, from: bob, text: "hi from bob" });
    await rec.waitFor("hi from bob");
    expect(rec.seen.map((m) => m.text)).toEqual(["hi from bob"]);
    expect(tg.trickles[0]!.ended).toBeUndefined();
    // The offset does not pass the open document: the polls after Bob's was received still ask from it, so
    // Telegram keeps it until it is received.
    const polls = tg.callsOf("getUpdates").length;
    await within(
      tg.waitFor(() => tg.callsOf("getUpdates").length >= polls + 2, "two more polls"),
      "two more polls",
    );
    expect(tg.callsOf("getUpdates").at(-1)!.params.offset).toBe(docId);
    expect(tg.confirmedBelow).toBe(docId);

    // 10 s without 40 KB: the document gives up, and is handed in without its file.
    clock.advance(10_000);
    const doc = await rec.waitFor("the slow one");
    expect(doc.attachments).toEqual([
      {
        kind: "document",
        fileName: "slow.pdf",
        mimeType: "application/pdf",
        sizeBytes: 10_000,
        note: "not downloaded: timed out (slower than 4 KB/s for 10 s)",
      },
    ]);
    await rec.waitFor("after my document");
    expect(rec.seen.map((m) => m.text)).toEqual(["hi from bob", "the slow one", "after my document"]);
    await within(
      tg.waitFor(() => tg.trickles[0]!.ended, "the download closed"),
      "the download closed",
    );
    expect(tg.trickles[0]!.ended).toBe("aborted");
    expect(await readdir(stagingDir)).toEqual([]);
    // Now everything is received, so the offset passes all three.
    await within(
      tg.waitFor(() => tg.confirmedBelow > bobId, "all three confirmed"),
      "all three confirmed",
    );
    expect(JSON.parse(await readFile(join(dir, "update-offset.json"), "utf8"))).toEqual({
      version: 1,
      offset: bobId + 1,
    });
  });

  it("a stranger's document is not downloaded: no getFile, nothing staged", async () => {
    const rec = recorder();
    const { tg, dir, stagingDir, runtime } = await setup(rec.receive);
    cleanup = async () => {
      await runtime.stop();
      await tg.close();
      await rm(dir, { recursive: true, force: true });
    };
    await runtime.start(new AbortController().signal);
    tg.addFile("doc-1", "documents/secret.txt", Buffer.from("payload"));
    tg.pushMessage({
      chat: { id: 9, type: "private" },
      from: { id: 9, first_name: "Eve" },
      caption: "take this",
      document: { fileId: "doc-1", fileName: "secret.txt", mimeType: "text/plain", size: 7 },
    });
    const handed = await rec.waitFor("take this");
    expect(handed.attachments).toBeUndefined();
    expect(tg.callsOf("getFile")).toEqual([]);
    expect(await readdir(stagingDir)).toEqual([]);
  });

  it("during an outage polling retries at most every 12.5 s, so it resumes soon after Telegram answers", async () => {
    const waits: number[] = [];
    const { tg, dir, runtime } = await setup(async () => ({ status: "duplicate" }), {
      options: {
        random: () => 1,
        wait: async (ms) => {
          waits.push(ms);
        },
      },
    });
    cleanup = async () => {
      await runtime.stop();
      await tg.close();
      await rm(dir, { recursive: true, force: true });
    };
    tg.failNext("getUpdates", { status: 502, description: "Bad Gateway" }, 8);
    await runtime.start(new AbortController().signal);
    await within(
      tg.waitFor(() => tg.polling, "a long poll after the outage"),
      "a long poll after the outage",
    );
    expect(waits).toEqual([1250, 2500, 5000, 10_000, 12_500, 12_500, 12_500, 12_500]);
  });

  it("a 401 at start is fatal and says which token to check", async () => {
    const { tg, dir, runtime } = await setup(async () => ({ status: "duplicate" }));
    cleanup = async () => {
      await tg.close();
      await rm(dir, { recursive: true, force: true });
    };
    tg.failNext("getMe", { status: 401, description: "Unauthorized" });
    const error = await runtime.start(new AbortController().signal).catch((e: unknown) => e);
    expect(error).toMatchObject({ fatal: true, message: expect.stringContaining("check telegram.botToken") });
    await runtime.stop();
  });
});
