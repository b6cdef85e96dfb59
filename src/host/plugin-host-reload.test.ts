import { describe, expect, it } from "vitest";
import { z } from "zod";
import { ManualClock } from "../core/clock.js";
import { defaultConfig } from "../core/config-schema.js";
import { ClawdisError } from "../core/errors.js";
import { createMemoryLogger } from "../core/logger.js";
import type {
  InboundMessage,
  PluginContext,
  PluginDefinition,
  PluginInstance,
  Transport,
} from "../plugin-api/index.js";
import { type BasePluginContext, PluginHost, type PluginHostOptions } from "./plugin-host.js";
import type { PluginStatus } from "./plugin-slot.js";

/**
 * A config change while the host runs (planReload + applyReload): live settings read through `context.config`,
 * one plugin restarted alone after its sends in flight, plugins switched on and off, bad settings refused.
 */

interface RelayConfig {
  allowFrom: string[];
  size: number;
}

const relaySchema = z
  .strictObject({ allowFrom: z.array(z.string()).default([]), size: z.number().default(1) })
  .default({ allowFrom: [], size: 1 });

function deferred<T = void>() {
  let resolve!: (value: T) => void;
  const promise = new Promise<T>((res) => {
    resolve = res;
  });
  return { promise, resolve };
}

const message = (senderId: string): InboundMessage => ({
  channel: "relay",
  chatId: senderId,
  chatType: "direct",
  senderId,
  messageId: "m1",
  text: "hi",
  receivedAt: 0,
});

/** A transport plugin on the section `<id>`; it reads `allowFrom` at each use and records its lifecycle. */
function relayPlugin(id: string, reload?: PluginDefinition["reload"]) {
  const record = { creates: [] as RelayConfig[], stops: 0, changed: [] as (readonly string[])[] };
  const definition: PluginDefinition<RelayConfig> = {
    apiVersion: 2,
    id,
    configSection: { key: id, schema: relaySchema, describe: { allowFrom: "who", size: "how big" } },
    ...(reload ? { reload } : {}),
    create(context: PluginContext<RelayConfig>): PluginInstance {
      record.creates.push(context.config);
      const transport: Transport = {
        capabilities: { maxTextLength: 100 },
        authorize: (m) =>
          context.config.allowFrom.includes(m.senderId)
            ? { allowed: true }
            : { allowed: false, reason: "no" },
        send: async () => ({}),
      };
      return {
        start: async () => {},
        stop: async () => {
          record.stops += 1;
        },
        transport,
        configChanged: (keys) => record.changed.push(keys),
      };
    },
  };
  return { definition: definition as PluginDefinition, record };
}

function baseContext(definition: PluginDefinition, config: unknown): BasePluginContext {
  const { logger } = createMemoryLogger();
  return {
    id: definition.id,
    config,
    gatewayConfig: defaultConfig(),
    stateDir: "/nonexistent",
    pluginStateDir: "/nonexistent/plugins/x",
    stagingDir: "/nonexistent/plugins/x/inbox",
    primarySessionKey: "main",
    logger,
    receive: async () => ({ status: "denied", reason: "test" }),
    onEvent: () => () => {},
    http: { route: () => {} },
    gatewayToken: "token",
  };
}

type Sections = Record<string, unknown>;

function makeHost(
  definitions: PluginDefinition[],
  sections: Sections,
  options: Partial<PluginHostOptions> = {},
) {
  const { logger, lines } = createMemoryLogger();
  const host = new PluginHost({
    definitions,
    entries: {},
    gatewayConfig: { ...defaultConfig(), ...sections },
    logger,
    clock: new ManualClock(),
    startDeadlineMs: 50,
    stopDeadlineMs: 20,
    contextFor: baseContext,
    ...options,
  });
  return { host, lines };
}

function reload(
  host: PluginHost,
  sections: Sections,
  restarts: { id: string; action?: "restart" | "start" | "stop" }[],
  live: string[] = [],
  entries: Record<string, { enabled: boolean; config?: unknown }> = {},
) {
  const plan = host.planReload({ gatewayConfig: { ...defaultConfig(), ...sections }, entries });
  return host.applyReload(
    plan,
    restarts.map((r) => ({ id: r.id, action: r.action ?? "restart", keys: [] })),
    live,
  );
}

const stateOf = (host: PluginHost, id: string): PluginStatus | undefined =>
  host.states().find((status) => status.id === id);

function waitFor(
  host: PluginHost,
  id: string,
  match: (status: PluginStatus) => boolean,
): Promise<PluginStatus> {
  const now = stateOf(host, id);
  if (now && match(now)) return Promise.resolve(now);
  return new Promise((resolve) => {
    const off = host.onStateChange((status) => {
      if (status.id === id && match(status)) {
        off();
        resolve(status);
      }
    });
  });
}

describe("PluginHost: a config change while it runs", () => {
  it("a live change is read through context.config: no restart, and configChanged hears the keys", async () => {
    const relay = relayPlugin("relay", { live: ["allowFrom"] });
    const { host } = makeHost([relay.definition], { relay: { allowFrom: ["alice"], size: 1 } });
    await host.start();
    const transport = host.transports().get("relay")!;
    expect(transport.authorize(message("bob")).allowed).toBe(false);
    await reload(host, { relay: { allowFrom: ["alice", "bob"], size: 1 } }, [], ["relay.allowFrom"]);
    expect(transport.authorize(message("bob")).allowed).toBe(true);
    expect(relay.record.creates).toHaveLength(1);
    expect(relay.record.changed).toEqual([["relay.allowFrom"]]);
    expect(stateOf(host, "relay")).toMatchObject({ state: "ok", restarts: 0 });
    await host.stop();
  });

  it("restarts one plugin alone, after its sends in flight: marked starting at once, stopped only after the drain", async () => {
    const a = relayPlugin("relay");
    const b = relayPlugin("other");
    const drained = deferred();
    const drainsAsked: string[] = [];
    const { host } = makeHost(
      [a.definition, b.definition],
      { relay: { allowFrom: ["alice"], size: 1 }, other: { allowFrom: [], size: 1 } },
      {
        drainSends: (id) => {
          drainsAsked.push(id);
          return drained.promise;
        },
      },
    );
    await host.start();
    const oldTransport = host.transports().get("relay");
    const applied = reload(
      host,
      { relay: { allowFrom: ["alice"], size: 2 }, other: { allowFrom: [], size: 1 } },
      [{ id: "relay" }],
    );
    await waitFor(host, "relay", (s) => s.state === "starting");
    // Sends to it park (the outbox sees no transport); what it hands in meanwhile is still taken.
    expect(host.transports().has("relay")).toBe(false);
    expect(host.transports().has("other")).toBe(true);
    expect(host.inputTransport("relay")).toBe(oldTransport);
    expect(stateOf(host, "relay")?.detail).toBe("restarting for a config change");
    expect(drainsAsked).toEqual(["relay"]);
    expect(a.record.stops).toBe(0);
    drained.resolve();
    await applied;
    expect(a.record.stops).toBe(1);
    expect(a.record.creates.map((c) => c.size)).toEqual([1, 2]);
    expect(stateOf(host, "relay")).toMatchObject({ state: "ok", restarts: 1 });
    expect(host.transports().get("relay")).not.toBe(oldTransport);
    // The other one kept running: created once, never stopped.
    expect(b.record.creates).toHaveLength(1);
    expect(b.record.stops).toBe(0);
    await host.stop();
  });

  it("a plugin switched on starts, one switched off stops and says why", async () => {
    const relay = relayPlugin("relay");
    const { host, lines } = makeHost([relay.definition], {}, {});
    await host.start();
    expect(stateOf(host, "relay")?.state).toBe("ok");
    await reload(host, {}, [{ id: "relay", action: "stop" }], [], { relay: { enabled: false } });
    expect(stateOf(host, "relay")).toMatchObject({
      state: "disabled",
      detail: "disabled in plugins.entries",
    });
    expect(relay.record.stops).toBe(1);
    expect(lines.some((l) => l.message === "plugin stopped for a config change")).toBe(true);
    await reload(host, {}, [{ id: "relay", action: "start" }], [], { relay: { enabled: true } });
    expect(stateOf(host, "relay")?.state).toBe("ok");
    expect(relay.record.creates).toHaveLength(2);
    await host.stop();
  });

  it("a plugin down waiting for its backoff starts at once with the new settings", async () => {
    let fail = true;
    let creates = 0;
    const definition: PluginDefinition = {
      apiVersion: 2,
      id: "flaky",
      create: () => {
        creates += 1;
        return {
          start: async () => {
            if (fail) throw new Error("cannot connect");
          },
        };
      },
    };
    const clock = new ManualClock();
    const { host } = makeHost([definition], {}, { clock });
    await host.start();
    await waitFor(
      host,
      "flaky",
      (s) => s.state === "down" && (s.detail?.startsWith("restarting in") ?? false),
    );
    fail = false;
    await reload(host, {}, [{ id: "flaky" }]);
    expect(stateOf(host, "flaky")).toMatchObject({ state: "ok" });
    // The backoff's restart was called off: no third instance later.
    clock.advance(60 * 60_000);
    await Promise.resolve();
    expect(creates).toBe(2);
    await host.stop();
  });

  it("bad settings under the new config are refused (CONFIG_INVALID, every plugin named) and change nothing", async () => {
    const strict: PluginDefinition = {
      apiVersion: 2,
      id: "strict",
      configSchema: z.strictObject({ url: z.string() }),
      create: () => ({}),
    };
    const { host } = makeHost([strict], {}, { entries: { strict: { enabled: true, config: { url: "a" } } } });
    await host.start();
    let error: unknown;
    try {
      host.planReload({
        gatewayConfig: defaultConfig(),
        entries: { strict: { enabled: true, config: { uri: "b" } } },
      });
    } catch (caught) {
      error = caught;
    }
    expect(error).toBeInstanceOf(ClawdisError);
    expect((error as ClawdisError).code).toBe("CONFIG_INVALID");
    expect((error as Error).message).toContain("plugins.entries.strict.config");
    expect(stateOf(host, "strict")?.state).toBe("ok");
    await host.stop();
  });

  it("refuses a definition whose reload is not lists of key paths", () => {
    const bad = relayPlugin("relay", { live: "allowFrom" as unknown as string[] });
    expect(() => makeHost([bad.definition], {})).toThrow(/reload must be/);
  });
});
