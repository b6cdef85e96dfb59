import { describe, expect, it } from "vitest";
import { z } from "zod";
import { ManualClock } from "../core/clock.js";
import { defaultConfig } from "../core/config-schema.js";
import { ClawdisError } from "../core/errors.js";
import { createMemoryLogger } from "../core/logger.js";
import {
  definePlugin,
  type PluginContext,
  type PluginDefinition,
  type PluginInstance,
  type ToolDefinition,
  type Transport,
  type TransportHealth,
} from "../plugin-api/index.js";
import { type BasePluginContext, NOT_RESTARTED, PluginHost, type PluginHostOptions } from "./plugin-host.js";
import type { PluginStatus } from "./plugin-slot.js";

const START_DEADLINE = 50;
const STOP_DEADLINE = 20;

function deferred<T = void>() {
  let resolve!: (value: T) => void;
  let reject!: (error: unknown) => void;
  const promise = new Promise<T>((res, rej) => {
    resolve = res;
    reject = rej;
  });
  return { promise, resolve, reject };
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

function makeHost(definitions: PluginDefinition[], options: Partial<PluginHostOptions> = {}) {
  const clock = new ManualClock();
  const { logger, lines } = createMemoryLogger();
  const contexts: { id: string; context: unknown; retired: AbortSignal }[] = [];
  const host = new PluginHost({
    definitions,
    entries: {},
    logger,
    clock,
    startDeadlineMs: START_DEADLINE,
    stopDeadlineMs: STOP_DEADLINE,
    contextFor: (definition, config, retired) => {
      const context = baseContext(definition, config);
      contexts.push({ id: definition.id, context, retired });
      return context;
    },
    ...options,
  });
  return { host, clock, lines, contexts };
}

/** Resolves with the first status of `id` that matches, now or after a later state change. */
function waitFor(
  host: PluginHost,
  id: string,
  match: (status: PluginStatus) => boolean,
): Promise<PluginStatus> {
  const now = host.states().find((status) => status.id === id);
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

const restartScheduled = (status: PluginStatus) =>
  status.state === "down" && (status.detail?.startsWith("restarting in") ?? false);

const stateOf = (host: PluginHost, id: string) => host.states().find((status) => status.id === id);

function transport(health?: () => TransportHealth): Transport {
  return {
    capabilities: { maxTextLength: 100 },
    authorize: () => ({ allowed: false, reason: "test" }),
    send: async () => ({}),
    ...(health ? { health } : {}),
  };
}

function plugin(
  id: string,
  create: PluginDefinition["create"],
  extra: Partial<PluginDefinition> = {},
): PluginDefinition {
  return { apiVersion: 1, id, create, ...extra };
}

describe("PluginHost start and restart", () => {
  it("a retry-after hint on fail() is the least wait before the restart, with jitter on top", async () => {
    let creates = 0;
    const limited = plugin("limited", (context) => {
      const n = ++creates;
      return {
        start: async () => {
          if (n === 1) context.fail(new Error("429: slow down"), { retryAfterMs: 30_000 });
        },
      };
    });
    // random() = 0.5: half of the 10 % jitter of the hint, 1.5 s.
    const { host, clock } = makeHost([limited], { restartPolicy: { random: () => 0.5 } });
    await host.start();
    expect(stateOf(host, "limited")?.detail).toBe("restarting in 32s");
    clock.advance(31_499);
    expect(creates).toBe(1);
    clock.advance(1);
    await expect.poll(() => creates).toBe(2);
  });

  it("retries a plugin whose start throws after the backoff, stopping the failed instance first", async () => {
    const events: string[] = [];
    let creates = 0;
    const flaky = plugin("flaky", () => {
      const n = ++creates;
      events.push(`create ${n}`);
      return {
        start: async () => {
          events.push(`start ${n}`);
          if (n === 1) throw new Error("connection refused");
        },
        stop: async () => {
          events.push(`stop ${n}`);
        },
      };
    });
    const { host, clock, lines } = makeHost([flaky]);
    await host.start();
    expect(stateOf(host, "flaky")).toEqual({
      id: "flaky",
      state: "down",
      detail: "restarting in 1s",
      restarts: 0,
      lastError: "connection refused",
    });
    expect(lines.some((line) => line.level === "error" && line.message === "plugin failed to start")).toBe(
      true,
    );

    clock.advance(999);
    expect(creates).toBe(1);
    const ok = waitFor(host, "flaky", (status) => status.state === "ok");
    clock.advance(1);
    expect(await ok).toMatchObject({ state: "ok", restarts: 1, lastError: "connection refused" });
    expect(events).toEqual(["create 1", "start 1", "stop 1", "create 2", "start 2"]);
    await host.stop();
  });

  it("tells onLaunch of every launch, before create: the first start and each restart", async () => {
    const events: string[] = [];
    let creates = 0;
    const flaky = plugin(
      "flaky",
      () => {
        events.push(`create ${++creates}`);
        return {
          start: async () => {
            if (creates === 1) throw new Error("connection refused");
          },
        };
      },
      { sendThread: true },
    );
    const { host, clock } = makeHost([flaky], {
      onLaunch: (definition) => events.push(`launch ${definition.id} ${String(definition.sendThread)}`),
    });
    const started = host.start();
    // Synchronously, within start() and before create: whoever launches plugins prepares for them in time.
    expect(events).toEqual(["launch flaky true", "create 1"]);
    await started;
    const ok = waitFor(host, "flaky", (status) => status.state === "ok");
    clock.advance(1000);
    await ok;
    expect(events).toEqual(["launch flaky true", "create 1", "launch flaky true", "create 2"]);
    await host.stop();
  });

  it("fails a start that does not resolve by the deadline, aborting its signal", async () => {
    const started = deferred<AbortSignal>();
    let stops = 0;
    const slow = plugin("slow", () => ({
      start: (signal) => {
        started.resolve(signal);
        return new Promise<void>(() => {});
      },
      stop: async () => {
        stops++;
      },
    }));
    const { host, clock } = makeHost([slow]);
    const starting = host.start();
    const signal = await started.promise;
    expect(stateOf(host, "slow")?.state).toBe("starting");
    clock.advance(START_DEADLINE - 1);
    expect(signal.aborted).toBe(false);
    clock.advance(1);
    await starting;
    expect(signal.aborted).toBe(true);
    expect(signal.reason).toBeInstanceOf(ClawdisError);
    expect((signal.reason as ClawdisError).code).toBe("PLUGIN_START_TIMEOUT");
    expect(stops).toBe(1);
    const status = stateOf(host, "slow");
    expect(status?.state).toBe("down");
    expect(status?.lastError).toContain('Plugin "slow" did not finish starting within 50ms');
    await host.stop();
  });

  it("keeps starting the others when one plugin's create throws", async () => {
    const broken = plugin("broken", () => {
      throw new Error("missing credentials file");
    });
    const good = plugin("good", () => ({ transport: transport() }));
    const { host } = makeHost([broken, good]);
    await host.start();
    expect(stateOf(host, "broken")).toMatchObject({ state: "down", lastError: "missing credentials file" });
    expect(stateOf(host, "good")?.state).toBe("ok");
    expect([...host.transports().keys()]).toEqual(["good"]);
    await host.stop();
  });

  it("does not restart after a fatal error", async () => {
    let creates = 0;
    const revoked = plugin("revoked", () => {
      creates++;
      return {
        start: async () => {
          throw new ClawdisError("UNAUTHORIZED", "Telegram says 401: the bot token was revoked");
        },
      };
    });
    const { host, clock } = makeHost([revoked]);
    await host.start();
    expect(stateOf(host, "revoked")).toMatchObject({
      state: "down",
      detail: NOT_RESTARTED,
      lastError: "Telegram says 401: the bot token was revoked",
    });
    clock.advance(60 * 60_000);
    expect(creates).toBe(1);
    await host.stop();
  });

  it("treats a malformed instance as fatal", async () => {
    const bad = plugin(
      "bad-instance",
      () => ({ transport: { capabilities: {} } }) as unknown as PluginInstance,
    );
    const { host } = makeHost([bad]);
    await host.start();
    const status = stateOf(host, "bad-instance");
    expect(status?.detail).toContain("not restarted");
    expect(status?.lastError).toContain("transport.capabilities.maxTextLength must be a positive integer");
    expect(status?.lastError).toContain("transport.send must be a function");
  });

  it("backs off 1s, 2s, 4s and starts over after a plugin ran long enough", async () => {
    let failStart = true;
    const launches: number[] = [];
    const unstable = plugin("unstable", () => ({
      start: async () => {
        launches.push(clock.now());
        if (failStart) throw new Error("down again");
      },
    }));
    const { host, clock } = makeHost([unstable], { stableAfterMs: 60_000 });
    const t0 = clock.now();
    await host.start();
    for (const [delay, next] of [
      [1_000, "2s"],
      [2_000, "4s"],
      [4_000, "8s"],
    ] as const) {
      const scheduled = waitFor(host, "unstable", (status) => status.detail === `restarting in ${next}`);
      clock.advance(delay);
      await scheduled;
    }
    expect(launches.map((at) => at - t0)).toEqual([0, 1_000, 3_000, 7_000]);
    expect(stateOf(host, "unstable")?.detail).toBe("restarting in 8s");

    failStart = false;
    const ok = waitFor(host, "unstable", (status) => status.state === "ok");
    clock.advance(8_000);
    await ok;
    clock.advance(60_000);
    host.reportFailure("unstable", new Error("socket closed"));
    expect(await waitFor(host, "unstable", restartScheduled)).toMatchObject({
      detail: "restarting in 1s",
      restarts: 4,
      lastError: "socket closed",
    });
    await host.stop();
  });
});

describe("PluginHost failure reports", () => {
  it("restarts a running plugin that calls context.fail, and ignores the old instance afterwards", async () => {
    const contexts: PluginContext[] = [];
    const stopped: number[] = [];
    const worker = plugin("worker", (context) => {
      contexts.push(context);
      const n = contexts.length;
      return {
        transport: transport(),
        stop: async () => {
          stopped.push(n);
        },
      };
    });
    const { host, clock, contexts: built } = makeHost([worker]);
    await host.start();
    contexts[0]?.fail(new Error("websocket closed 1006"));
    expect(stateOf(host, "worker")?.state).toBe("down");
    expect(host.transports().size).toBe(0);
    await waitFor(host, "worker", restartScheduled);
    expect(stopped).toEqual([1]);
    expect(built[0]?.retired.aborted).toBe(true);
    expect(built[1]).toBeUndefined();

    const ok = waitFor(host, "worker", (status) => status.state === "ok");
    clock.advance(1_000);
    await ok;
    expect(built[1]?.retired.aborted).toBe(false);
    contexts[0]?.fail(new Error("stale report"));
    expect(stateOf(host, "worker")).toMatchObject({
      state: "ok",
      lastError: "websocket closed 1006",
      restarts: 1,
    });
    await host.stop();
    expect(stopped).toEqual([1, 2]);
  });

  it("fails the start with the error a plugin reports while starting", async () => {
    const early = plugin("early", (context) => ({
      start: () => {
        context.fail(new Error("login rejected"));
        return new Promise<void>(() => {});
      },
    }));
    const { host } = makeHost([early]);
    await host.start();
    expect(stateOf(host, "early")).toMatchObject({ state: "down", lastError: "login rejected" });
    await host.stop();
  });

  it("logs and ignores a report for an unknown plugin", () => {
    const { host, lines } = makeHost([]);
    host.reportFailure("ghost", new Error("x"));
    expect(lines.some((line) => line.level === "warn" && line.fields?.plugin === "ghost")).toBe(true);
  });

  it("stops an instance whose create finished after the start deadline", async () => {
    const created = deferred<PluginInstance>();
    let stops = 0;
    const late = plugin("late", () => created.promise);
    const { host, clock } = makeHost([late]);
    const starting = host.start();
    clock.advance(START_DEADLINE);
    await starting;
    expect(stateOf(host, "late")?.state).toBe("down");
    const stoppedOrphan = deferred();
    created.resolve({
      stop: async () => {
        stops++;
        stoppedOrphan.resolve();
      },
    });
    await stoppedOrphan.promise;
    expect(stops).toBe(1);
    await host.stop();
    expect(stops).toBe(1);
  });
});

describe("PluginHost stop", () => {
  it("stops in reverse order, once, and is idempotent", async () => {
    const order: string[] = [];
    const make = (id: string) => plugin(id, () => ({ stop: async () => void order.push(id) }));
    const { host } = makeHost([make("a"), make("b"), make("c")]);
    await host.start();
    const first = host.stop();
    expect(host.stop()).toBe(first);
    await first;
    await host.stop();
    expect(order).toEqual(["c", "b", "a"]);
    expect(host.states().map((status) => status.state)).toEqual(["stopped", "stopped", "stopped"]);
    expect(host.transports().size).toBe(0);
    await expect(host.start()).rejects.toThrow("after stop()");
  });

  it("skips a plugin that misses the stop deadline or throws, and stops the rest", async () => {
    const order: string[] = [];
    const hangStarted = deferred();
    const { host, clock, lines } = makeHost([
      plugin("first", () => ({ stop: async () => void order.push("first") })),
      plugin("throws", () => ({
        stop: async () => {
          order.push("throws");
          throw new Error("close failed");
        },
      })),
      plugin("hangs", () => ({
        stop: () => {
          order.push("hangs");
          hangStarted.resolve();
          return new Promise<void>(() => {});
        },
      })),
    ]);
    await host.start();
    const stopping = host.stop();
    await hangStarted.promise;
    expect(order).toEqual(["hangs"]);
    clock.advance(STOP_DEADLINE);
    await stopping;
    expect(order).toEqual(["hangs", "throws", "first"]);
    const warnings = lines.filter((line) => line.level === "warn").map((line) => line.fields?.error);
    expect(warnings).toContain('Plugin "hangs" did not finish stopping within 20ms');
    expect(warnings).toContain("close failed");
  });

  it("cancels a pending restart", async () => {
    let creates = 0;
    const failing = plugin("failing", () => {
      creates++;
      throw new Error("no network");
    });
    const { host, clock } = makeHost([failing]);
    await host.start();
    await host.stop();
    clock.advance(10 * 60_000);
    expect(creates).toBe(1);
    expect(stateOf(host, "failing")).toMatchObject({ state: "stopped", lastError: "no network" });
  });

  it("aborts a start in progress and stops what it created", async () => {
    const started = deferred<AbortSignal>();
    let stops = 0;
    const pending = plugin("pending", () => ({
      start: (signal) => {
        started.resolve(signal);
        return new Promise<void>(() => {});
      },
      stop: async () => {
        stops++;
      },
    }));
    const { host } = makeHost([pending]);
    const starting = host.start();
    const signal = await started.promise;
    await host.stop();
    await starting;
    expect(signal.aborted).toBe(true);
    expect((signal.reason as Error).name).toBe("AbortError");
    expect(stops).toBe(1);
    expect(stateOf(host, "pending")).toEqual({ id: "pending", state: "stopped", restarts: 0 });
  });
});

describe("PluginHost configuration", () => {
  const schema = z.strictObject({
    botToken: z.string().min(1),
    allowFrom: z.array(z.string()).default([]),
    pollSeconds: z.number().default(30),
  });

  it("names the path of every invalid setting (CONFIG_INVALID, exit code 2)", () => {
    const chat = definePlugin({ apiVersion: 1, id: "chat", configSchema: schema, create: () => ({}) });
    let caught: unknown;
    try {
      makeHost([chat], { entries: { chat: { enabled: true, config: { allowFrom: ["ok", 42], extra: 1 } } } });
    } catch (error) {
      caught = error;
    }
    expect(caught).toBeInstanceOf(ClawdisError);
    const error = caught as ClawdisError;
    expect(error.code).toBe("CONFIG_INVALID");
    expect(error.exitCode).toBe(2);
    expect(error.message).toContain("plugins.entries.chat.config.botToken:");
    expect(error.message).toContain("plugins.entries.chat.config.allowFrom[1]:");
    expect(error.message).toMatch(/plugins\.entries\.chat\.config: .*extra/);
  });

  it("hands the parsed settings, defaults applied, to contextFor", async () => {
    const seen: unknown[] = [];
    const chat = definePlugin({
      apiVersion: 1,
      id: "chat",
      configSchema: schema,
      create: (context) => {
        seen.push(context.config);
        return {};
      },
    });
    const { host } = makeHost([chat as PluginDefinition], {
      entries: { chat: { enabled: true, config: { botToken: "123:abc" } } },
    });
    await host.start();
    expect(seen).toEqual([{ botToken: "123:abc", allowFrom: [], pollSeconds: 30 }]);
    await host.stop();
  });

  it("validates a missing entry as {} and rejects settings for a plugin without a schema", () => {
    const chat = plugin("chat", () => ({}), { configSchema: schema });
    expect(() => makeHost([chat])).toThrow(/plugins\.entries\.chat\.config\.botToken/);
    const bare = plugin("bare", () => ({}));
    expect(() => makeHost([bare], { entries: { bare: { enabled: true, config: { x: 1 } } } })).toThrow(
      'plugins.entries.bare.config: plugin "bare" takes no settings',
    );
    expect(() => makeHost([bare], { entries: { bare: { enabled: true, config: {} } } })).not.toThrow();
  });

  it("neither validates nor creates a disabled plugin", async () => {
    let creates = 0;
    const chat = plugin(
      "chat",
      () => {
        creates++;
        return {};
      },
      { configSchema: schema },
    );
    const { host } = makeHost([chat], { entries: { chat: { enabled: false, config: { botToken: 7 } } } });
    await host.start();
    expect(creates).toBe(0);
    expect(host.states()).toEqual([
      { id: "chat", state: "disabled", detail: "disabled in plugins.entries", restarts: 0 },
    ]);
    await host.stop();
    expect(stateOf(host, "chat")?.state).toBe("disabled");
  });

  it("rejects duplicate ids and definitions for another API version", () => {
    const one = plugin("same", () => ({}));
    expect(() => makeHost([one, plugin("same", () => ({}))])).toThrow(/Two plugins have the id "same"/);
    try {
      makeHost([plugin("future", () => ({}), { apiVersion: 3 })]);
      expect.unreachable();
    } catch (error) {
      expect((error as ClawdisError).code).toBe("PLUGIN_INVALID");
      expect((error as Error).message).toContain("plugin API version 3");
    }
  });

  it("warns about entries that name no loaded plugin", () => {
    const { lines } = makeHost([], { entries: { telegarm: { enabled: true } } });
    expect(lines).toContainEqual(
      expect.objectContaining({ level: "warn", fields: expect.objectContaining({ plugin: "telegarm" }) }),
    );
  });
});

describe("PluginHost states, transports and tools", () => {
  const tool: ToolDefinition = {
    name: "lookup",
    description: "test tool",
    parameters: { type: "object" },
    execute: async () => ({ ok: true, output: "" }),
  };

  it("merges transport health into states() and filters transports() by it", async () => {
    let health: TransportHealth = { state: "degraded", detail: "rate limited, retrying in 30s" };
    const definitions = [
      plugin("whats", () => ({ transport: transport(() => health) }), { version: "2.1.0" }),
      plugin("tele", () => ({ transport: transport() }), { version: "1.0.0" }),
      plugin("tools-only", () => ({ tools: [tool] })),
      plugin(
        "crashy",
        () => ({
          transport: transport(() => {
            throw new Error("no socket");
          }),
        }),
        {},
      ),
      plugin("off", () => ({})),
      plugin("dead", () => {
        throw new Error("ENOENT creds.json");
      }),
    ];
    const { host } = makeHost(definitions, { entries: { off: { enabled: false } } });
    await host.start();
    expect(host.states()).toEqual([
      {
        id: "whats",
        version: "2.1.0",
        state: "degraded",
        detail: "rate limited, retrying in 30s",
        restarts: 0,
      },
      { id: "tele", version: "1.0.0", state: "ok", restarts: 0 },
      { id: "tools-only", state: "ok", restarts: 0 },
      { id: "crashy", state: "degraded", detail: "health() failed: no socket", restarts: 0 },
      { id: "off", state: "disabled", detail: "disabled in plugins.entries", restarts: 0 },
      { id: "dead", state: "down", detail: "restarting in 1s", restarts: 0, lastError: "ENOENT creds.json" },
    ]);
    expect([...host.transports().keys()]).toEqual(["whats", "tele", "crashy"]);
    expect(host.tools().map((t) => t.name)).toEqual(["lookup"]);

    health = { state: "down", detail: "logged out" };
    expect(stateOf(host, "whats")).toMatchObject({ state: "down", detail: "logged out" });
    expect([...host.transports().keys()]).toEqual(["tele", "crashy"]);
    await host.stop();
    expect(host.tools()).toEqual([]);
  });

  it("reports starting while create and start run", async () => {
    const gate = deferred();
    const { host } = makeHost([plugin("gated", () => ({ start: () => gate.promise }))]);
    expect(stateOf(host, "gated")).toMatchObject({ state: "stopped", detail: "not started" });
    const starting = host.start();
    expect(stateOf(host, "gated")?.state).toBe("starting");
    expect(host.transports().size).toBe(0);
    gate.resolve();
    await starting;
    expect(stateOf(host, "gated")?.state).toBe("ok");
    await host.stop();
  });
});

describe("PluginHost: plugins whose section does not ask for them", () => {
  it("is not created while its section's enabled() says no, and shows as not configured", async () => {
    let created = 0;
    const definition: PluginDefinition = {
      apiVersion: 2,
      id: "gated",
      configSection: {
        key: "gated",
        schema: { safeParse: (v: unknown) => ({ success: true, data: v }) } as never,
        enabled: (config: unknown) => (config as { token?: string }).token !== undefined,
        describe: {},
      },
      create: () => {
        created++;
        return {};
      },
    };
    const off = makeHost([definition], { gatewayConfig: { gated: {} } });
    await off.host.start();
    expect(created).toBe(0);
    expect(stateOf(off.host, "gated")).toMatchObject({
      state: "disabled",
      detail: 'not configured (see the "gated" section)',
    });
    const on = makeHost([definition], { gatewayConfig: { gated: { token: "t" } } });
    await on.host.start();
    expect(created).toBe(1);
  });
});
