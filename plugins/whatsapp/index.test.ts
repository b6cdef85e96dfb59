import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { composeConfigSchema } from "../../src/core/config-sections.js";
import { silentLogger } from "../../src/core/logger.js";
import { builtinConfigSections } from "../../src/main.js";
import type { PluginContext, PluginInstance } from "../../src/plugin-api/index.js";
import {
  recordSockets,
  type SocketRecorder,
  writeLinkedCredentials,
} from "../../test/fakes/whatsapp-link.js";
import { type FakeWhatsappServer, startFakeWhatsappServer } from "../../test/fakes/whatsapp-server.js";
import type { WhatsappConfig } from "./config.js";
import { createWhatsappPlugin } from "./index.js";

/** The plugin's own start/stop contract, on a context built as the gateway builds one. */

let server: FakeWhatsappServer;
let stateDir: string;
let recorder: SocketRecorder;
let instance: PluginInstance | undefined;

beforeEach(async () => {
  server = await startFakeWhatsappServer();
  stateDir = await mkdtemp(join(tmpdir(), "clawdis-wa-idx-"));
  recorder = recordSockets();
  await writeLinkedCredentials(stateDir, "15550001111", "900000000000001");
});
afterEach(async () => {
  await instance?.stop?.();
  instance = undefined;
  await server.close();
  await rm(stateDir, { recursive: true, force: true });
});

async function create(raw: Record<string, unknown> = {}) {
  const schema = composeConfigSchema(await builtinConfigSections({}));
  const gatewayConfig = schema.parse({ whatsapp: { enabled: true, socketUrl: server.url }, ...raw });
  const failures: unknown[] = [];
  const context: PluginContext<WhatsappConfig> = {
    id: "whatsapp",
    config: (gatewayConfig as unknown as { whatsapp: WhatsappConfig }).whatsapp,
    gatewayConfig,
    stateDir,
    pluginStateDir: join(stateDir, "plugins", "whatsapp"),
    stagingDir: join(stateDir, "plugins", "whatsapp", "inbox"),
    primarySessionKey: "main",
    logger: silentLogger,
    receive: async () => ({ status: "denied", reason: "not under test" }),
    onEvent: () => () => {},
    http: { route: () => {} },
    gatewayToken: "t",
    fail: (error) => failures.push(error),
  };
  instance = await createWhatsappPlugin({ makeSocket: recorder.makeSocket }).create(context);
  return { instance, failures };
}

describe("the WhatsApp plugin instance", () => {
  it("opens one socket when two starts race", async () => {
    const { instance } = await create();
    const signal = new AbortController().signal;
    await Promise.all([instance.start?.(signal), instance.start?.(signal)]);
    await server.waitForConnections(1);
    await instance.start?.(signal);
    expect(recorder.sockets.items).toHaveLength(1);
    expect(instance.transport?.health?.()).toEqual({ state: "starting", detail: "connecting" });
  });

  it("refuses a mention pattern that is not a regular expression, fatally, naming the key", async () => {
    const { instance } = await create({ inbound: { groupChat: { mentionPatterns: ["ok", "(unclosed"] } } });
    const error = await instance.start?.(new AbortController().signal).catch((e: unknown) => e);
    expect((error as Error).message).toMatch(
      /^inbound\.groupChat\.mentionPatterns\[1\] is not a regular expression/,
    );
    expect((error as { fatal?: boolean }).fatal).toBe(true);
    expect(recorder.sockets.items).toHaveLength(0);
  });

  it("closes its socket on stop", async () => {
    const { instance } = await create();
    await instance.start?.(new AbortController().signal);
    await server.waitForConnections(1);
    await instance.stop?.();
    await server.waitForNoneOpen();
    expect(instance.transport?.health?.()).toEqual({ state: "stopped" });
  });
});
