import { readFileSync } from "node:fs";
import { mkdir, mkdtemp, rm, unlink, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { watch } from "chokidar";
import { afterEach, describe, expect, it } from "vitest";
import { allowFromWarning } from "../src/core/allow-from-warning.js";
import { type LoadedConfig, reloadConfigWithPlugins } from "../src/core/config.js";
import { configDigest } from "../src/core/config-digest.js";
import type { ConfigSectionEntry } from "../src/core/config-sections.js";
import { createMemoryLogger, type LogLine, silentLogger } from "../src/core/logger.js";
import { builtinConfigSections } from "../src/main.js";
import { ConfigReloader, type ConfigReloaderOptions } from "../src/runtime/config-reloader.js";
import { CONFIG_RECHECK_MS, ConfigWatcher } from "../src/runtime/config-watcher.js";
import { type FakeOpenAI, startFakeOpenAI } from "./fakes/openai-server.js";
import { done, startTestGateway, type TestGateway } from "./helpers/gateway-harness.js";

/**
 * The config reloader on an in-process gateway: a real config file in the temp state dir, read and validated as
 * at start, applied to the running gateway (live keys read through `gateway.config`), refused when invalid.
 * The watcher is left out here (its own tests, and the end-to-end ones, run it): each test calls `reload()`
 * for the save it made, as the watcher would.
 */

type Json = Record<string, unknown>;

interface Setup {
  t: TestGateway;
  reloader: ConfigReloader;
  path: string;
  lines: LogLine[];
  restarts: { reason: string; next: LoadedConfig }[];
  save(config: Json | string): Promise<void>;
  /** The config the gateway started on. */
  base: Json;
  fake: FakeOpenAI;
  /** How many times the reloader asked for the config sections (to validate). */
  sectionsAsked(): number;
}

const open: Setup[] = [];
afterEach(async () => {
  for (const s of open.splice(0)) {
    await s.reloader.stop();
    await s.t.close();
    await s.fake.close();
  }
});

async function setup(
  options: {
    restart?: { ok: true } | { ok: false; error: string };
    /** The restart callback waits for this (a restart under way). */
    restartGate?: Promise<void>;
    config?: Json;
    /** The reloader's watcher; default none (each test calls `reload()`). `clock`: the gateway's manual clock. */
    watch?: (clock: TestGateway["clock"]) => NonNullable<ConfigReloaderOptions["watch"]>;
    /** The config cache as the reloader sees it: the start's text only, as after a start. */
    cacheHoldsStart?: boolean;
  } = {},
): Promise<Setup> {
  const fake = await startFakeOpenAI();
  const base: Json = {
    gateway: { port: 0 },
    inbound: { reply: { agent: { baseUrl: fake.url, model: "fake-model" } } },
    ...options.config,
  };
  const t = await startTestGateway({ fake, config: base });
  const path = join(t.stateDir, "clawdis.json");
  const save = (config: Json | string) =>
    writeFile(path, typeof config === "string" ? config : `${JSON.stringify(config, null, 2)}\n`);
  await save(base);
  const env = { CLAWDIS_STATE_DIR: t.stateDir, HOME: t.stateDir };
  const sections: readonly ConfigSectionEntry[] = await builtinConfigSections(env);
  const first = await reloadConfigWithPlugins(path, env, sections, async () => []);
  if (!first.exists) throw new Error("the config file was just written");
  const { logger, lines } = createMemoryLogger();
  const restarts: { reason: string; next: LoadedConfig }[] = [];
  let asked = 0;
  const startText = first.text;
  const reloader = new ConfigReloader({
    loaded: first.loaded,
    env,
    sections: async () => {
      asked++;
      return sections;
    },
    ...(options.cacheHoldsStart
      ? {
          cached: () => {
            const text = readFileSync(path, "utf8");
            return text === startText ? { loaded: first.loaded, text } : undefined;
          },
        }
      : {}),
    loadSections: async () => [],
    target: () => t.gateway,
    restartGateway: async (reason, next) => {
      restarts.push({ reason, next });
      await options.restartGate;
      return options.restart ?? { ok: true };
    },
    logger,
    clock: t.clock,
    watch: options.watch?.(t.clock) ?? (() => ({ start: async () => {}, close: async () => {} })),
  });
  await reloader.start();
  const s = { t, reloader, path, lines, restarts, save, base, fake, sectionsAsked: () => asked };
  open.push(s);
  return s;
}

const withAgent = (base: Json, agent: Json): Json => {
  const inbound = base.inbound as { reply: { agent: Json } };
  return {
    ...base,
    inbound: { ...inbound, reply: { ...inbound.reply, agent: { ...inbound.reply.agent, ...agent } } },
  };
};
const withSession = (base: Json, session: Json): Json => {
  const inbound = base.inbound as { reply: Json };
  return { ...base, inbound: { ...inbound, reply: { ...inbound.reply, session } } };
};
/** Resolves once `condition()` holds, checked after each turn of the event loop (no fixed wait). */
async function waitUntil(condition: () => boolean): Promise<void> {
  while (!condition()) await new Promise((resolve) => setImmediate(resolve));
}

/** Resolves once `condition()` holds, checked after each turn of the event loop; fails naming `what` after 10 s. */
async function until(condition: () => boolean, what: string): Promise<void> {
  const deadline = Date.now() + 10_000;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`${what}: not within 10 s`);
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}

const infoLines = (lines: LogLine[]) => lines.filter((l) => l.level === "info").map((l) => l.message);

describe("config reload on a running gateway", () => {
  it("at start, the file the gateway started on changes nothing and says nothing", async () => {
    const { t, lines, base } = await setup();
    expect(lines).toEqual([]);
    expect(t.gateway.configState.snapshot(0).sha256).toBe(configDigest(`${JSON.stringify(base, null, 2)}\n`));
  });

  it("a file the config cache holds is taken from it: no schema at start; an edit it does not hold is validated", async () => {
    const s = await setup({ cacheHoldsStart: true });
    expect(s.sectionsAsked(), "sections loaded at the start's look").toBe(0);
    // The start's look confirmed the file: the digest of the text the gateway runs on, nothing rejected.
    const atStart = s.t.gateway.configState.snapshot(0);
    expect(atStart.sha256).toBe(configDigest(`${JSON.stringify(s.base, null, 2)}\n`));
    expect(atStart.rejected).toBeUndefined();
    await s.save(withAgent(s.base, { model: "other-model" }));
    expect(await s.reloader.reload()).toBe("applied");
    expect(s.sectionsAsked(), "sections loaded for the edit").toBe(1);
    expect(s.t.gateway.config.inbound.reply.agent.model).toBe("other-model");
  });

  it("a live change applies at once: reset triggers, the model; one line names the keys", async () => {
    const { t, reloader, save, base, lines, fake } = await setup();
    await save(withSession(withAgent(base, { model: "other-model" }), { resetTriggers: ["/new", "/reset"] }));
    expect(await reloader.reload()).toBe("applied");
    expect(infoLines(lines)).toEqual([
      "config change: applied live: inbound.reply.session.resetTriggers, inbound.reply.agent.model",
    ]);
    const reset = await done(await t.chat.inject({ text: "/reset" }));
    expect(reset.payloads).toEqual([{ text: "New session started." }]);
    await done(await t.chat.inject({ text: "hello" }));
    expect(fake.requests.at(-1)?.body.model).toBe("other-model");
    expect(t.gateway.modelProbe.snapshot().name).toBe("other-model");
  });

  it("a new model endpoint ends the old endpoint's check in flight: its request goes away", async () => {
    const { reloader, save, base, fake } = await setup();
    fake.hangModels = true;
    const next = await startFakeOpenAI();
    try {
      // A new model on the same endpoint: a new check there, held.
      const count = fake.modelRequests.length;
      await save(withAgent(base, { model: "other-model" }));
      expect(await reloader.reload()).toBe("applied");
      const held = await fake.waitForModelsRequest(count + 1);
      let gone: string | undefined;
      void held.closed.then((how) => {
        gone = how;
      });
      await save(withAgent(base, { baseUrl: next.url, model: "other-model" }));
      expect(await reloader.reload()).toBe("applied");
      await until(() => gone !== undefined, "the old endpoint's GET /models to go away");
      expect(gone).toBe("aborted");
      await next.waitForModelsRequest(1);
    } finally {
      fake.releaseModels();
      await next.close();
    }
  });

  it("mention settings apply live: an unmentioned group message is answered once requireMention is off", async () => {
    const { t, reloader, save, base } = await setup();
    const group = { chatType: "group" as const, chatId: "g1", text: "anyone?" };
    const before = await done(await t.chat.inject(group));
    expect(before.stopReason).toBe("filtered");
    await save({ ...base, inbound: { ...(base.inbound as Json), groupChat: { requireMention: false } } });
    expect(await reloader.reload()).toBe("applied");
    const after = await done(await t.chat.inject({ ...group, text: "anyone now?" }));
    expect(after.stopReason).toBe("end");
  });

  it('"*" newly in inbound.allowFrom is warned about once, in the words of the start', async () => {
    const { reloader, save, base, lines } = await setup();
    const warnings = () => lines.filter((l) => l.level === "warn").map((l) => l.message);
    const anyone = (allowFrom: string[]) => ({ ...base, inbound: { ...(base.inbound as Json), allowFrom } });
    await save(anyone(["*"]));
    expect(await reloader.reload()).toBe("applied");
    expect(warnings()).toEqual([allowFromWarning({ inbound: { allowFrom: ["*"] } })]);
    await save(anyone(["*", "+4915112345678"]));
    expect(await reloader.reload()).toBe("applied");
    expect(warnings()).toHaveLength(1);
  });

  it("logging.level applies live", async () => {
    const { t, reloader, save, base } = await setup();
    await save({ ...base, logging: { level: "error" } });
    await reloader.reload();
    t.gateway.options.logger.warn("a warning after the change");
    expect(t.logs.some((l) => l.message === "a warning after the change")).toBe(false);
    await save({ ...base, logging: { level: "debug" } });
    await reloader.reload();
    t.gateway.options.logger.debug("a debug line after the change");
    expect(t.logs.some((l) => l.message === "a debug line after the change")).toBe(true);
  });

  it("a transport switched off and on again: the reply that came while it was off waits, and is sent once", async () => {
    const { t, reloader, save, base, lines } = await setup();
    t.fake.enqueue({ text: "the late reply", hang: "before-headers" });
    const asked = await t.chat.inject({ text: "answer me later" });
    await t.fake.waitForRequest(1);
    await save({ ...base, plugins: { entries: { chat: { enabled: false } } } });
    expect(await reloader.reload()).toBe("applied");
    expect(infoLines(lines)).toContain("config change: chat stops for plugins.entries.chat");
    expect(t.gateway.host.states().find((s) => s.id === "chat")?.state).toBe("disabled");
    t.fake.release();
    await done(asked);
    // Parked while its transport is off: nothing sent, nothing lost.
    expect(t.chat.sent).toEqual([]);
    await save(base);
    expect(await reloader.reload()).toBe("applied");
    const sent = await t.chat.waitForSent(1);
    expect(sent.map((m) => m.text)).toEqual(["the late reply"]);
    await t.idle();
    expect(t.chat.sent).toHaveLength(1);
  });

  it("an invalid edit keeps the last good config, logged as at start (key path, line), in /status until a good save", async () => {
    const { t, reloader, save, base, lines } = await setup();
    const bad = `{\n  "gateway": { "port": 0 },\n  "inbound": { "reply": { "session": { "idleMinutes": "soon" } } }\n}\n`;
    await save(bad);
    expect(await reloader.reload()).toBe("rejected");
    const error = lines.find((l) => l.level === "error")?.message ?? "";
    expect(error).toContain("config edit rejected, the gateway keeps running on the last good config");
    expect(error).toContain(
      'inbound.reply.session.idleMinutes: expected a number >= 1, got "soon" (clawdis.json line 3)',
    );
    // Exactly the start's message: the same text `clawdis gateway` would print for this file.
    expect(error).toContain(`invalid config ${join(t.stateDir, "clawdis.json")}:`);
    expect(t.gateway.config.inbound.reply.agent.model).toBe("fake-model");
    t.clock.advance(2 * 60_000);
    const status = await t.gateway.statusText("main");
    expect(status).toContain(
      'config: last edit rejected 2m ago: inbound.reply.session.idleMinutes: expected a number >= 1, got "soon" (clawdis.json line 3)',
    );
    // Still answering on the old config.
    const reply = await done(await t.chat.inject({ text: "still there?" }));
    expect(reply.payloads).toEqual([{ text: "echo: still there?" }]);
    await save(base);
    expect(await reloader.reload()).toBe("applied");
    expect(await t.gateway.statusText("main")).not.toContain("config:");
  });

  it("an empty file (a save caught between its truncation and its write) changes nothing; the full save after it applies", async () => {
    const { t, reloader, save, base, lines } = await setup();
    await save("");
    expect(await reloader.reload()).toBe("rejected");
    expect(lines.find((l) => l.level === "error")?.message).toContain(
      "config edit rejected, the gateway keeps running on the last good config: the file is empty",
    );
    expect(t.gateway.config.inbound.reply.agent.model).toBe("fake-model");
    expect(t.gateway.configState.snapshot(0).rejected?.error).toContain("save `{}` to run on the defaults");
    await save("  \n");
    expect(await reloader.reload()).toBe("rejected");
    await save(withAgent(base, { model: "after the save" }));
    expect(await reloader.reload()).toBe("applied");
    expect(t.gateway.config.inbound.reply.agent.model).toBe("after the save");
  });

  it("a syntax error is refused with its line and column, as at start", async () => {
    const { t, reloader, save, lines } = await setup();
    await save("{\n  gateway: { port 0 }\n}\n");
    expect(await reloader.reload()).toBe("rejected");
    expect(lines.find((l) => l.level === "error")?.message).toMatch(
      /JSON5 syntax error at line 2, column \d+/,
    );
    expect(t.gateway.configState.snapshot(0).rejected?.summary).toMatch(/JSON5 syntax error at line 2/);
  });

  it("bad settings of a plugin's own config are refused too, and nothing is applied", async () => {
    const { t, reloader, save, base } = await setup();
    await save(
      withAgent({ ...base, plugins: { entries: { chat: { config: { nope: 1 } } } } }, { model: "x" }),
    );
    expect(await reloader.reload()).toBe("rejected");
    expect(t.gateway.configState.snapshot(0).rejected?.error).toContain("plugins.entries.chat.config");
    expect(t.gateway.config.inbound.reply.agent.model).toBe("fake-model");
  });

  it("a deleted file keeps the last good config with one warning; saved again, it applies", async () => {
    const { t, reloader, save, base, lines, path } = await setup();
    await unlink(path);
    expect(await reloader.reload()).toBe("deleted");
    expect(await reloader.reload()).toBe("deleted");
    const warnings = lines.filter((l) => l.level === "warn").map((l) => l.message);
    expect(warnings).toEqual([
      `config file ${path} was deleted: the gateway keeps running on the last good config; a file saved there again is read at once`,
    ]);
    expect(t.gateway.config.inbound.reply.agent.model).toBe("fake-model");
    // (The harness's gateway names no config file; `clawdis gateway` names the one it loaded.)
    expect(await t.gateway.statusText("main")).toContain(
      "was deleted 0s ago; running on the last good config",
    );
    await save(withAgent(base, { model: "back" }));
    expect(await reloader.reload()).toBe("applied");
    expect(t.gateway.config.inbound.reply.agent.model).toBe("back");
    expect(t.gateway.configState.snapshot(0).deleted).toBeUndefined();
  });

  it("after the path was a folder (EISDIR), the next valid save is applied, even when chokidar lost track of it", async () => {
    // The real watcher on the real file. Its first chokidar watches an empty folder: like one that lost track of
    // the path (seen when the path turned into a folder while chokidar scanned), it reports nothing. Those started
    // anew watch the real folder.
    const empty = await mkdtemp(join(tmpdir(), "clawdis-watch-empty-"));
    let chokidars = 0;
    const { t, reloader, save, base, path } = await setup({
      watch: (clock) => (file, onEvent) =>
        new ConfigWatcher({
          path: file,
          onEvent,
          logger: silentLogger,
          clock,
          watchFolder: (folder, opts) => watch(chokidars++ === 0 ? empty : folder, opts),
        }),
    });
    try {
      await unlink(path);
      await mkdir(path);
      // The look an event would start: the read fails, the edit is rejected, /status says so.
      expect(await reloader.reload()).toBe("rejected");
      expect(t.gateway.configState.snapshot(0).rejected?.error).toMatch(/EISDIR/);
      await rm(path, { recursive: true });
      await save(withAgent(base, { model: "after-the-folder" }));
      t.clock.advance(CONFIG_RECHECK_MS);
      await until(
        () => t.gateway.config.inbound.reply.agent.model === "after-the-folder",
        "the save applied",
      );
      expect(t.gateway.configState.snapshot(0).rejected).toBeUndefined();
      // And the save after it, through the chokidar started anew.
      await save(withAgent(base, { model: "and-the-next" }));
      await until(
        () => t.gateway.config.inbound.reply.agent.model === "and-the-next",
        "the next save applied",
      );
      expect(chokidars).toBe(2);
    } finally {
      await rm(empty, { recursive: true, force: true });
    }
  });

  it("the same text saved again (a touch) is no change and no line", async () => {
    const { reloader, save, base, lines } = await setup();
    await save(withAgent(base, { model: "m2" }));
    await reloader.reload();
    await save(withAgent(base, { model: "m2" }));
    expect(await reloader.reload()).toBe("unchanged");
    expect(infoLines(lines)).toHaveLength(1);
  });

  it("a key that needs the whole gateway asks for the in-process restart, naming the keys", async () => {
    const { t, reloader, save, base, restarts, lines } = await setup();
    await save({
      ...base,
      gateway: { port: 1 },
      inbound: { ...(base.inbound as Json), allowFrom: ["+4915123456789"] },
    });
    expect(await reloader.reload()).toBe("restarted");
    expect(restarts.map((r) => r.reason)).toEqual(["config change: gateway.port"]);
    expect(restarts[0]?.next.config.gateway.port).toBe(1);
    expect(infoLines(lines)).toEqual([
      "config change: the gateway restarts for gateway.port; with it: inbound.allowFrom",
    ]);
    // Nothing was applied to this gateway: the restart brings the new config.
    expect(t.gateway.config.inbound.allowFrom).toEqual([]);
  });

  it("a restart that could not start on the new config counts as a rejected edit", async () => {
    const { t, reloader, save, base } = await setup({
      restart: { ok: false, error: "127.0.0.1:1 is in use" },
    });
    await save({ ...base, gateway: { port: 1 } });
    expect(await reloader.reload()).toBe("restart-failed");
    expect(await t.gateway.statusText("main")).toContain(
      "config: last edit rejected 0s ago: the gateway could not start on it: 127.0.0.1:1 is in use",
    );
  });

  it("a save while a reload is under way is read once more afterwards: the last one wins", async () => {
    let release!: () => void;
    const restartGate = new Promise<void>((resolve) => {
      release = resolve;
    });
    const { t, reloader, save, base, restarts } = await setup({ restartGate });
    await save({ ...base, gateway: { port: 1 } });
    const first = reloader.reload();
    await waitUntil(() => restarts.length === 1);
    // Saved while the first reload waits for its restart.
    await save(withAgent(base, { model: "second" }));
    const second = reloader.reload();
    release();
    await Promise.all([first, second]);
    await reloader.idle();
    expect(t.gateway.config.inbound.reply.agent.model).toBe("second");
  });
});
