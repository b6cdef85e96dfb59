import { mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { defaultConfig } from "../../src/core/config-schema.js";
import type {
  GatewayEvent,
  InboundMessage,
  PluginContext,
  ReceiveResult,
} from "../../src/plugin-api/types.js";
import { FakeTelegram } from "../../test/fakes/telegram-server.js";
import { type TelegramConfig, telegramSchema } from "./config.js";
import { TelegramRuntime } from "./telegram-runtime.js";

/** The runtime with real grammY, the fake Bot API server and real files; the gateway side is a recording context. */
async function setup(receive: (m: InboundMessage) => Promise<ReceiveResult>) {
  const tg = await FakeTelegram.start();
  const dir = await mkdtemp(join(tmpdir(), "tg-runtime-"));
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
    allowFrom: [7],
  });
  const context = {
    id: "telegram",
    config,
    gatewayConfig: defaultConfig(),
    pluginStateDir: dir,
    stagingDir: dir,
    logger,
    receive,
    onEvent: (listener: (e: GatewayEvent) => void) => {
      listeners.push(listener);
      return () => listeners.splice(listeners.indexOf(listener), 1);
    },
    http: { route: () => {} },
    fail: (error: unknown) => logs.push(`fail ${String(error)}`),
  } as unknown as PluginContext<TelegramConfig>;
  const runtime = new TelegramRuntime(context, { token: tg.token });
  const emit = (e: GatewayEvent) => {
    for (const l of [...listeners]) l(e);
  };
  return { tg, dir, logs, runtime, emit };
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

  it("a 401 at start is fatal and says to check the token", async () => {
    const { tg, dir, runtime } = await setup(async () => ({ status: "duplicate" }));
    cleanup = async () => {
      await tg.close();
      await rm(dir, { recursive: true, force: true });
    };
    tg.failNext("getMe", { status: 401, description: "Unauthorized" });
    const error = await runtime.start(new AbortController().signal).catch((e: unknown) => e);
    expect(error).toMatchObject({ fatal: true, message: expect.stringContaining("check the token") });
    await runtime.stop();
  });
});
