import { mkdtemp, rm, stat } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { defaultConfig } from "../core/config-schema.js";
import { createMemoryLogger } from "../core/logger.js";
import { definePlugin, PLUGIN_API_VERSION } from "../plugin-api/index.js";
import type { GatewayEvent, InboundMessage, ReceiveResult } from "../plugin-api/types.js";
import { type PluginContextDeps, pluginContext } from "./plugin-context.js";

const definition = definePlugin({
  apiVersion: PLUGIN_API_VERSION,
  id: "chat",
  version: "1",
  create: () => ({}),
});

const message = (channel: string): InboundMessage => ({
  channel,
  chatId: "c-1",
  chatType: "direct",
  senderId: "alice",
  messageId: "m1",
  text: "hi",
  receivedAt: 0,
});

describe("pluginContext", () => {
  let stateDir: string;
  let received: InboundMessage[];
  let routes: string[];
  let listeners: Set<(event: GatewayEvent) => void>;
  let deps: PluginContextDeps;

  beforeEach(async () => {
    stateDir = await mkdtemp(join(tmpdir(), "clawdis-pctx-"));
    received = [];
    routes = [];
    listeners = new Set();
    deps = {
      stateDir,
      gatewayConfig: () => defaultConfig(),
      primarySessionKey: () => "main",
      logger: createMemoryLogger().logger,
      gatewayToken: "token",
      route: (method, path) => {
        const route = `${method} ${path}`;
        routes.push(route);
        return () => routes.splice(routes.indexOf(route), 1);
      },
      onEvent: (listener) => {
        listeners.add(listener);
        return () => listeners.delete(listener);
      },
      receive: async (m): Promise<ReceiveResult> => {
        received.push(m);
        return { status: "duplicate" };
      },
    };
  });
  afterEach(async () => {
    await rm(stateDir, { recursive: true, force: true });
  });

  it("hands in messages of the plugin's own channel and denies any other without reaching the pipeline", async () => {
    const context = pluginContext(deps, definition, {}, new AbortController().signal);
    expect(await context.receive(message("chat"))).toEqual({ status: "duplicate" });
    expect(await context.receive(message("telegram"))).toEqual({
      status: "denied",
      reason: 'plugin "chat" may only hand in messages of its own channel',
    });
    expect(received.map((m) => m.channel)).toEqual(["chat"]);
  });

  it("creates the plugin's own directory and its staging folder, 0700", async () => {
    const context = pluginContext(deps, definition, {}, new AbortController().signal);
    expect(context.pluginStateDir).toBe(join(stateDir, "plugins", "chat"));
    expect(context.stagingDir).toBe(join(stateDir, "plugins", "chat", "inbox"));
    expect((await stat(context.stagingDir)).mode & 0o777).toBe(0o700);
    expect(context).toMatchObject({ id: "chat", stateDir, primarySessionKey: "main", gatewayToken: "token" });
  });

  it("removes the instance's routes and event listeners when it is retired, and only then", () => {
    const retired = new AbortController();
    const context = pluginContext(deps, definition, {}, retired.signal);
    context.http.route("GET", "/chat", () => {});
    context.onEvent(() => {});
    expect(routes).toEqual(["GET /chat"]);
    expect(listeners.size).toBe(1);
    retired.abort();
    expect(routes).toEqual([]);
    expect(listeners.size).toBe(0);
  });
});
