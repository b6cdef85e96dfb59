import { existsSync } from "node:fs";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { z } from "zod";
import { type FakeOpenAI, startFakeOpenAI } from "../../test/fakes/openai-server.js";
import { createGateway } from "../cli/gateway.js";
import { recordingIO } from "../cli/io.js";
import type { LoadedConfig } from "../core/config.js";
import { createMemoryLogger } from "../core/logger.js";
import type { Gateway } from "../gateway.js";
import { loadGatewayConfig } from "../host/plugin-loader.js";
import { definePlugin, PLUGIN_API_VERSION, type PluginDefinition } from "../plugin-api/index.js";
import { GatewaySupervisor } from "./gateway-supervisor.js";
import { restartManifestPath } from "./restart-manifest.js";

/**
 * The supervisor on real gateways (real HTTP on 127.0.0.1, real files): `restartGateway`, the callback the config
 * reloader gets, rebinds in the same process; restarts run one after another; a stop during a restart wins.
 */
describe("GatewaySupervisor", () => {
  let dir: string;
  let fake: FakeOpenAI;
  let supervisor: GatewaySupervisor | undefined;
  const published: { gateway: Gateway; port: number | undefined }[] = [];
  const env = () => ({ CLAWDIS_STATE_DIR: dir, HOME: dir });
  const load = async (port: number): Promise<LoadedConfig> => {
    await writeFile(
      join(dir, "clawdis.json"),
      JSON.stringify({ gateway: { port }, inbound: { reply: { agent: { baseUrl: fake.url, model: "m" } } } }),
    );
    return loadGatewayConfig(env(), []);
  };
  const make = () => {
    const { logger, lines } = createMemoryLogger("info");
    const io = recordingIO(env());
    const deps = { builtinPlugins: async () => [], configSections: async () => [], version: "test" };
    supervisor = new GatewaySupervisor({
      create: (next) => createGateway(io, deps, { listen: true, loaded: next }),
      published: async (gateway, address, _kind) => {
        published.push({ gateway, port: address?.port });
      },
      stateDir: dir,
      logger,
      now: Date.now,
      fatal: (why) => {
        throw new Error(`fatal: ${why}`);
      },
    });
    return { supervisor, lines };
  };
  const status = (port: number | undefined) =>
    fetch(`http://127.0.0.1:${port}/api/status`).then(
      (r) => r.status,
      () => "refused" as const,
    );
  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), "clawdis-supervisor-"));
    fake = await startFakeOpenAI();
    published.length = 0;
  });
  afterEach(async () => {
    await supervisor?.stop();
    supervisor = undefined;
    await fake.close();
    await rm(dir, { recursive: true, force: true });
  });

  it("a built-in plugin whose section the config lacks starts on its defaults: its schema loader runs at creation", async () => {
    const seen: unknown[] = [];
    let loads = 0;
    const lazy = definePlugin({
      apiVersion: PLUGIN_API_VERSION,
      id: "lazy-section",
      configSection: {
        key: "lazySection",
        schema: async () => {
          loads++;
          return z.strictObject({ greeting: z.string().default("hi") }).default({ greeting: "hi" });
        },
        describe: { greeting: "what it says" },
      },
      create: (context) => {
        seen.push(context.config);
        return { start: async () => {}, stop: async () => {}, send: async () => ({ ok: true }) };
      },
    }) as PluginDefinition;
    const io = recordingIO(env());
    const deps = { builtinPlugins: async () => [lazy], configSections: async () => [], version: "test" };
    // Loaded without the section (no built-in sections composed): the plugin's defaults come from its schema.
    const gateway = await createGateway(io, deps, { listen: true, loaded: await load(0) });
    expect(loads).toBe(1);
    try {
      await gateway.start();
      await gateway.pluginsStarted;
      expect(seen).toEqual([{ greeting: "hi" }]);
    } finally {
      await gateway.stop();
    }
  });

  it("restartGateway with a new gateway.port rebinds: a new gateway on the new port, the old port closed", async () => {
    const { supervisor } = make();
    const first = await supervisor.start(await load(0));
    const old = supervisor.current;
    const next = await load(0);
    expect(await supervisor.restartGateway("config change: gateway.port", next)).toEqual({ ok: true });
    expect(supervisor.current).not.toBe(old);
    expect(old.isStopping()).toBe(true);
    expect(supervisor.config).toBe(next);
    expect(published).toHaveLength(2);
    const port = published[1]?.port;
    expect(port).not.toBe(first?.port);
    expect(await status(port)).toBe(401);
    expect(await status(first?.port)).toBe("refused");
    expect(supervisor.current.restartInfo()).toMatchObject({ reason: "config change: gateway.port" });
  });

  it("restarts asked for at once run one after another, each on its own config", async () => {
    const { supervisor, lines } = make();
    await supervisor.start(await load(0));
    const a = await load(0);
    const b = await load(0);
    const results = await Promise.all([
      supervisor.restartGateway("one", a),
      supervisor.restartGateway("two", b),
    ]);
    expect(results).toEqual([{ ok: true }, { ok: true }]);
    expect(supervisor.config).toBe(b);
    expect(lines.filter((l) => l.message === "restarting in-process").map((l) => l.fields?.reason)).toEqual([
      "one",
      "two",
    ]);
    expect(published.map((p) => p.gateway.isStopping())).toEqual([true, true, false]);
  });

  it("a stop that comes during a restart: the restart starts nothing, and the stop ends with every gateway stopped", async () => {
    const { supervisor } = make();
    await supervisor.start(await load(0));
    const restarting = supervisor.restartGateway("config change", await load(0));
    const stopped = supervisor.stop();
    expect(await restarting).toEqual({ ok: false, error: "the gateway is stopping" });
    await stopped;
    expect(published).toHaveLength(1);
    expect(published[0]?.gateway.isStopping()).toBe(true);
    // It stopped as a stop, not as a restart: no manifest was left for a start that will not come.
    expect(existsSync(restartManifestPath(dir))).toBe(false);
    expect(await supervisor.restartGateway("later", await load(0))).toEqual({
      ok: false,
      error: "the gateway is stopping",
    });
  });
});
