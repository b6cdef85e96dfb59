import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { z } from "zod";
import {
  type ConfigSectionEntry,
  defaultConfig,
  type LoadPluginSections,
  loadConfig,
  loadConfigWithPlugins,
  parseConfigText,
  resolveConfigRelativePath,
  validateConfigText,
} from "./config.js";
import { sectionEntry } from "./config-sections.js";
import { ClawdisError, isClawdisError } from "./errors.js";
import type { Env } from "./paths.js";

type Json = Record<string, unknown>;

let home: string;
let state: string;
let env: Env;

beforeEach(async () => {
  home = await mkdtemp(join(tmpdir(), "clawdis-config-"));
  state = join(home, ".clawdis");
  await mkdir(state, { recursive: true });
  // HOME points into the temp dir so "~" never touches the real home folder.
  env = { HOME: home };
});

afterEach(async () => {
  await rm(home, { recursive: true, force: true });
});

/** Runs `fn`, expecting a ClawdisError, and returns it. */
function thrown(fn: () => unknown): ClawdisError {
  try {
    fn();
  } catch (error) {
    if (error instanceof ClawdisError) return error;
    throw error;
  }
  throw new Error("expected a ClawdisError");
}

describe("loadConfig", () => {
  it("uses every default when the file is missing", () => {
    const loaded = loadConfig(env);
    expect(loaded.exists).toBe(false);
    expect(loaded.path).toBe(join(home, ".clawdis", "clawdis.json"));
    expect(loaded.config).toEqual(defaultConfig());
    expect(loaded.config.inbound.reply.session).toMatchObject({
      scope: "per-sender",
      idleMinutes: 60,
      resetTriggers: ["/new"],
      mainKey: "main",
    });
    expect(loaded.config.gateway).toEqual({
      port: 18789,
      bind: "127.0.0.1",
      parkedReplyWarnSeconds: 300,
      openai: { enabled: false, tools: [] },
    });
    expect(loaded.storePath).toBe(join(state, "sessions", "sessions.json"));
    expect(loaded.workspaceDir).toBe(join(state, "workspace"));
  });

  it("reads <state>/clawdis.json", async () => {
    await writeFile(join(state, "clawdis.json"), "// mine\n{ gateway: { port: 1234, }, }\n");
    const loaded = loadConfig(env);
    expect(loaded.exists).toBe(true);
    expect(loaded.config.gateway.port).toBe(1234);
    expect(loaded.config.gateway.bind).toBe("127.0.0.1");
  });

  it("treats a file of only comments and whitespace as {}", async () => {
    await writeFile(join(state, "clawdis.json"), "\n  // nothing yet\n  /* still nothing */\n");
    const loaded = loadConfig(env);
    expect(loaded.exists).toBe(true);
    expect(loaded.config).toEqual(defaultConfig());
  });

  it("honours CLAWDIS_STATE_DIR for the config, store and workspace", async () => {
    const other = join(home, "elsewhere");
    await mkdir(other);
    await writeFile(join(other, "clawdis.json"), "{ logging: { level: 'debug' } }");
    const loaded = loadConfig({ ...env, CLAWDIS_STATE_DIR: other });
    expect(loaded.path).toBe(join(other, "clawdis.json"));
    expect(loaded.config.logging.level).toBe("debug");
    expect(loaded.storePath).toBe(join(other, "sessions", "sessions.json"));
    expect(loaded.workspaceDir).toBe(join(other, "workspace"));
  });

  it("with clawdis.json and clawdis.json5 both in the state dir, reads the .json one and says the other is ignored", async () => {
    await writeFile(join(state, "clawdis.json"), "{ logging: { level: 'debug' } }");
    await writeFile(join(state, "clawdis.json5"), "{ logging: { level: 'error' } }");
    const loaded = loadConfig({ ...env, CLAWDIS_STATE_DIR: state });
    expect(loaded.path).toBe(join(state, "clawdis.json"));
    expect(loaded.config.logging.level).toBe("debug");
    expect(loaded.warnings).toContain(
      `both clawdis.json and clawdis.json5 are in ${state}: ${join(state, "clawdis.json")} is read, ${join(state, "clawdis.json5")} is ignored (move what it holds into clawdis.json, then delete it)`,
    );
  });

  it("reads clawdis.json5 when it is the only one, without a note", async () => {
    await writeFile(join(state, "clawdis.json5"), "{ logging: { level: 'error' } }");
    const loaded = loadConfig({ ...env, CLAWDIS_STATE_DIR: state });
    expect(loaded.path).toBe(join(state, "clawdis.json5"));
    expect(loaded.config.logging.level).toBe("error");
    expect(loaded.warnings.filter((w) => w.includes("json5"))).toEqual([]);
  });

  it("honours CLAWDIS_CONFIG_PATH, with ~ expanded, over the state dir", async () => {
    await writeFile(join(home, "custom.json5"), "{ logging: { level: 'debug' } }");
    await writeFile(join(state, "clawdis.json"), "{ logging: { level: 'error' } }");
    const loaded = loadConfig({ ...env, CLAWDIS_CONFIG_PATH: "~/custom.json5" });
    expect(loaded.path).toBe(join(home, "custom.json5"));
    expect(loaded.config.logging.level).toBe("debug");
    // The store still defaults under the state dir, not next to the config file.
    expect(loaded.storePath).toBe(join(state, "sessions", "sessions.json"));
  });

  it("expands ~ in the store and workspace paths", async () => {
    await writeFile(
      join(state, "clawdis.json"),
      '{ inbound: { reply: { session: { store: "~/.clawdis/sessions/sessions.json" }, agent: { workspace: "~" } } } }',
    );
    const loaded = loadConfig(env);
    expect(loaded.storePath).toBe(join(home, ".clawdis", "sessions", "sessions.json"));
    expect(loaded.workspaceDir).toBe(home);
    // The config keeps what the user wrote; only the resolved fields are expanded.
    expect(loaded.config.inbound.reply.session.store).toBe("~/.clawdis/sessions/sessions.json");
  });

  it("resolves relative store/workspace paths against the config file's folder", async () => {
    const configDir = join(home, "conf");
    await mkdir(configDir);
    await writeFile(
      join(configDir, "c.json"),
      '{ inbound: { reply: { session: { store: "data/s.json" }, agent: { workspace: "../ws" } } } }',
    );
    const loaded = loadConfig({ ...env, CLAWDIS_CONFIG_PATH: join(configDir, "c.json") });
    expect(loaded.storePath).toBe(join(configDir, "data", "s.json"));
    expect(loaded.workspaceDir).toBe(join(home, "ws"));
  });

  it("fails with CONFIG_SYNTAX, line and column, exit code 2, on a JSON5 syntax error", async () => {
    const path = join(state, "clawdis.json");
    await writeFile(path, "{\n  gateway: {\n    xport 1,\n  },\n}\n");
    const error = thrown(() => loadConfig(env));
    expect(error.code).toBe("CONFIG_SYNTAX");
    expect(error.exitCode).toBe(2);
    expect(error.message).toContain(
      `${path}: JSON5 syntax error at line 3, column 11: invalid character '1'`,
    );
  });

  it("fails with CONFIG_INVALID naming key path, expectation, value and line; never falls back", async () => {
    const path = join(state, "clawdis.json");
    const text = [
      "{", // 1
      "  // my config", // 2
      "  inbound: {", // 3
      "    reply: {", // 4
      "      session: {", // 5
      '        scope: "per-sender",', // 6
      '        idleMinutes: "soon",', // 7
      "      },", // 8
      "    },", // 9
      "  },", // 10
      "  gateway: {", // 11
      "    prot: 8080,", // 12
      "  },", // 13
      "}", // 14
    ].join("\n");
    await writeFile(path, text);
    const error = thrown(() => loadConfig(env));
    expect(error.code).toBe("CONFIG_INVALID");
    expect(error.exitCode).toBe(2);
    const lines = error.message.split("\n");
    expect(lines[0]).toBe(`invalid config ${path}:`);
    expect(error.message).toContain(
      'inbound.reply.session.idleMinutes: expected a number >= 1, got "soon" (clawdis.json line 7)',
    );
    expect(error.message).toContain(
      'gateway.prot: unknown key (clawdis.json line 12) — did you mean "port"?',
    );
    expect(lines).toHaveLength(3);
  });

  it("refuses an invalid file even when only one key is wrong (no partial defaults)", async () => {
    await writeFile(join(state, "clawdis.json"), "{ gateway: { port: 18790 }, logging: { level: 'loud' } }");
    const error = thrown(() => loadConfig(env));
    expect(isClawdisError(error, "CONFIG_INVALID")).toBe(true);
    expect(error.message).toContain(
      'logging.level: expected one of "debug", "info", "warn", "error", got "loud" (clawdis.json line 1)',
    );
  });

  it("fails with IO (not defaults) when the path exists but is not a readable file", async () => {
    await mkdir(join(state, "clawdis.json"));
    const error = thrown(() => loadConfig(env));
    expect(error.code).toBe("IO");
    expect(error.message).toContain("cannot read config");
  });
});

describe("parseConfigText", () => {
  it("parses JSON5 with comments, unquoted keys, single quotes and trailing commas", () => {
    const config = parseConfigText(
      "{ /* c */ inbound: { groupChat: { mentionPatterns: ['bot', \"x\",], }, }, }",
      "clawdis.json",
    );
    expect(config.inbound.groupChat.mentionPatterns).toEqual(["bot", "x"]);
    expect(config.inbound.groupChat.requireMention).toBe(true);
  });

  it("rejects a top level that is not an object", () => {
    const error = thrown(() => parseConfigText("[1, 2]", "clawdis.json"));
    expect(error.code).toBe("CONFIG_INVALID");
    expect(error.message).toContain("(top level): expected an object, got [1,2] (clawdis.json line 1)");
  });

  it("reports every problem, one per line, in file order", () => {
    const text = [
      "{",
      "  logging: { level: 'loud' },",
      "  inbound: {",
      "    allowFrom: ['5551234'],",
      "    reply: { agent: { baseUrl: 'localhost:11434/v1', contextTokens: 1.5 } },",
      "  },",
      "  plugins: { entries: { x: { enabled: 'yes' } } },",
      "  sessions: {},",
      "}",
    ].join("\n");
    const lines = thrown(() => parseConfigText(text, "clawdis.json")).message.split("\n");
    expect(lines.slice(1)).toEqual([
      '  logging.level: expected one of "debug", "info", "warn", "error", got "loud" (clawdis.json line 2)',
      '  inbound.allowFrom[0]: expected an E.164 number like "+4915123456789" or "*", got "5551234" (clawdis.json line 4)',
      '  inbound.reply.agent.baseUrl: expected an http:// or https:// URL like "http://127.0.0.1:11434/v1", got "localhost:11434/v1" (clawdis.json line 5)',
      "  inbound.reply.agent.contextTokens: expected an integer > 0, got 1.5 (clawdis.json line 5)",
      '  plugins.entries.x.enabled: expected true or false, got "yes" (clawdis.json line 7)',
      "  sessions: unknown key (clawdis.json line 8) — did you mean inbound.reply.session?",
    ]);
  });

  it("suggests where a misplaced key belongs", () => {
    const text = "{\n  inbound: {\n    idleMinutes: 30,\n  },\n}";
    expect(thrown(() => parseConfigText(text, "clawdis.json")).message).toContain(
      "inbound.idleMinutes: unknown key (clawdis.json line 3) — it belongs at inbound.reply.session.idleMinutes",
    );
  });

  it("reports JSON5-only values such as Infinity readably", () => {
    const text = "{ inbound: { reply: { session: { idleMinutes: Infinity } } } }";
    expect(thrown(() => parseConfigText(text, "clawdis.json")).message).toContain(
      "inbound.reply.session.idleMinutes: expected a number >= 1, got Infinity (clawdis.json line 1)",
    );
  });
});

describe("parseConfigText: duplicate keys", () => {
  it("stops on a key written twice even when every value is valid, naming the key and both lines", () => {
    const text = "{\n  gateway: {\n    port: 8080,\n    bind: '127.0.0.1',\n    port: 9090,\n  },\n}";
    const error = thrown(() => parseConfigText(text, "/x/clawdis.json"));
    expect(error.code).toBe("CONFIG_INVALID");
    expect(error.exitCode).toBe(2);
    expect(error.message.split("\n")).toEqual([
      "invalid config /x/clawdis.json:",
      "  gateway.port: duplicate key (clawdis.json line 5; also line 3) — only the last one would count: keep one",
    ]);
  });

  it("lists a duplicate among schema problems in file order", () => {
    const text = "{\n  logging: { level: 'loud' },\n  gateway: { port: 1 },\n  gateway: { port: 2 },\n}";
    const lines = thrown(() => parseConfigText(text, "clawdis.json")).message.split("\n");
    expect(lines.slice(1)).toEqual([
      '  logging.level: expected one of "debug", "info", "warn", "error", got "loud" (clawdis.json line 2)',
      "  gateway: duplicate key (clawdis.json line 4; also line 3) — only the last one would count: keep one",
    ]);
  });

  it("accepts the same key in different objects", () => {
    const text =
      "{ gateway: { port: 1 }, plugins: { entries: { a: { enabled: true }, b: { enabled: true } } } }";
    expect(parseConfigText(text, "clawdis.json").gateway.port).toBe(1);
  });
});

describe("resolveConfigRelativePath", () => {
  it.each([
    ["~", "/home/u"],
    ["~/x/y.json", "/home/u/x/y.json"],
    ["/abs/../p.json", "/p.json"],
    ["rel/p.json", "/etc/clawdis/rel/p.json"],
    ["./p.json", "/etc/clawdis/p.json"],
  ])("%s", (value, expected) => {
    expect(resolveConfigRelativePath(value, "/etc/clawdis/clawdis.json", { HOME: "/home/u" })).toBe(expected);
  });
});

/** A section like a transport's: strict, with defaults, asking for its plugin when a token is set. */
const relaySection = {
  key: "relay",
  schema: z
    .strictObject({
      token: z.string().min(1).optional(),
      retry: z.strictObject({ attempts: z.number().int().min(1).default(3) }).default({ attempts: 3 }),
    })
    .default({ retry: { attempts: 3 } }),
  enabled: (value: { token?: string | undefined }) => value.token !== undefined,
  describe: { token: "the token", "retry.attempts": "how often" },
};
const relay = sectionEntry("relay", relaySection);
const relayWithoutPlugin = sectionEntry("relay", relaySection, (value) =>
  value.token === undefined
    ? "relay asks"
    : "relay.token is set but the relay is not available in this build",
);
const strictWith = (...sections: ConfigSectionEntry[]) => ({ sections, unclaimed: "error" as const });

describe("plugin config sections", () => {
  it("gives a section its defaults when it is left out, and its parsed value under its key", () => {
    const without = validateConfigText("{}", "clawdis.json", strictWith(relay)).config as unknown as Json;
    expect(without.relay).toEqual({ retry: { attempts: 3 } });
    const text = "{ relay: { token: 't', retry: { attempts: 5 } } }";
    const config = parseConfigText(text, "clawdis.json", strictWith(relay)) as unknown as Json;
    expect(config.relay).toEqual({ token: "t", retry: { attempts: 5 } });
  });

  it("is strict like the core: a nested typo is an error with its full path, line and did-you-mean", () => {
    const text = "{\n  relay: {\n    retry: {\n      attempt: 5,\n    },\n  },\n}";
    const error = thrown(() => parseConfigText(text, "/x/clawdis.json", strictWith(relay)));
    expect(error.code).toBe("CONFIG_INVALID");
    expect(error.exitCode).toBe(2);
    expect(error.message.split("\n")).toEqual([
      "invalid config /x/clawdis.json:",
      '  relay.retry.attempt: unknown key (clawdis.json line 4) — did you mean "attempts"?',
    ]);
  });

  it("points a section's key written at the top level to where it belongs", () => {
    const error = thrown(() => parseConfigText("{\n  token: 'x',\n}", "clawdis.json", strictWith(relay)));
    expect(error.message).toContain("token: unknown key (clawdis.json line 2) — it belongs at relay.token");
  });

  it("refuses a plugin's settings under plugins.entries when the plugin has a section, naming the line", () => {
    const text = "{\n  plugins: {\n    entries: {\n      relay: { config: { token: 'x' } },\n    },\n  },\n}";
    const error = thrown(() => parseConfigText(text, "clawdis.json", strictWith(relay)));
    expect(error.code).toBe("CONFIG_INVALID");
    expect(error.message).toContain(
      'plugins.entries.relay.config: plugin "relay" takes its settings from the top-level section "relay", not from here: move them there (clawdis.json line 4)',
    );
    // Without the section, the same entry is the plugin's own settings, as before.
    expect(parseConfigText(text, "clawdis.json").plugins.entries.relay?.config).toEqual({ token: "x" });
  });

  it("warns once for a section that asks for a plugin this build does not have, and not when it does not ask", () => {
    const asks = validateConfigText("{ relay: { token: 't' } }", "c.json", strictWith(relayWithoutPlugin));
    expect(asks.warnings).toEqual(["relay.token is set but the relay is not available in this build"]);
    expect(validateConfigText("{}", "c.json", strictWith(relayWithoutPlugin)).warnings).toEqual([]);
    // A section whose plugin is there never warns.
    expect(validateConfigText("{ relay: { token: 't' } }", "c.json", strictWith(relay)).warnings).toEqual([]);
  });

  it("warns without a file too (a section may ask through the environment)", () => {
    const always = sectionEntry("relay", { ...relaySection, enabled: () => true }, () => "asked");
    const loaded = loadConfig(env, [always]);
    expect(loaded.exists).toBe(false);
    expect(loaded.warnings).toEqual(["asked"]);
  });
});

describe("loadConfig: keys no known section claims", () => {
  it("are errors with the known sections when plugins.load is empty", async () => {
    await writeFile(join(state, "clawdis.json"), "{\n  relai: {},\n}");
    const error = thrown(() => loadConfig(env, [relay]));
    expect(error.message).toContain('relai: unknown key (clawdis.json line 2) — did you mean "relay"?');
  });

  it("are accepted unchecked, with the closest known key, when plugins.load names plugins", async () => {
    await writeFile(
      join(state, "clawdis.json"),
      "{ plugins: { load: ['./x'] }, echo: { anything: 1 }, relai: {}, relay: { token: 't' } }",
    );
    const loaded = loadConfig(env, [relay]);
    expect(loaded.unchecked).toEqual([{ key: "echo" }, { key: "relai", closest: "relay" }]);
    expect((loaded.config as unknown as Json).echo).toEqual({ anything: 1 });
    // The known section is still checked strictly.
    await writeFile(join(state, "clawdis.json"), "{ plugins: { load: ['./x'] }, relay: { tokn: 't' } }");
    expect(thrown(() => loadConfig(env, [relay])).message).toContain("relay.tokn: unknown key");
  });

  it("are all accepted unchecked in the core's view (no sections given), core keys still strict", async () => {
    await writeFile(join(state, "clawdis.json"), "{ telegram: { botToken: 'x' }, gateway: { port: 1 } }");
    expect(loadConfig(env).unchecked).toEqual([{ key: "telegram" }]);
    await writeFile(join(state, "clawdis.json"), "{ telegram: {}, gateway: { prot: 1 } }");
    expect(thrown(() => loadConfig(env)).message).toContain(
      'gateway.prot: unknown key (clawdis.json line 1) — did you mean "port"?',
    );
  });
});

describe("loadConfigWithPlugins", () => {
  const echoSection = sectionEntry("echo-transport", {
    key: "echo",
    schema: z.strictObject({ allowFrom: z.array(z.string()).default([]) }).default({ allowFrom: [] }),
    describe: { allowFrom: "who" },
  });

  it("loads the plugins of plugins.load for their sections, from the config's folder, and checks them strictly", async () => {
    const calls: { specs: readonly string[]; baseDir: string }[] = [];
    const load: LoadPluginSections = async (specs, baseDir) => {
      calls.push({ specs, baseDir });
      return [echoSection];
    };
    await writeFile(
      join(state, "clawdis.json"),
      "{ plugins: { load: ['./echo'] }, echo: { allowFrom: ['a'] } }",
    );
    const loaded = await loadConfigWithPlugins(env, [relay], load);
    expect(calls).toEqual([{ specs: ["./echo"], baseDir: state }]);
    expect((loaded.config as unknown as Json).echo).toEqual({ allowFrom: ["a"] });
    expect(loaded.unchecked).toEqual([]);

    await writeFile(
      join(state, "clawdis.json"),
      "{\n  plugins: { load: ['./echo'] },\n  echo: { allowfrom: ['a'] },\n  other: {},\n}",
    );
    const error = await loadConfigWithPlugins(env, [relay], load).then(
      () => undefined,
      (caught: unknown) => caught as ClawdisError,
    );
    expect(error?.code).toBe("CONFIG_INVALID");
    expect(error?.message.split("\n").slice(1)).toEqual([
      '  echo.allowfrom: unknown key (clawdis.json line 3) — did you mean "allowFrom"?',
      "  other: unknown key (clawdis.json line 4) — known keys here: $schema, inbound, gateway, plugins, logging, relay, echo",
    ]);
  });

  it("loads no plugin when the rest of the config is invalid, or when plugins.load is empty", async () => {
    let loads = 0;
    const load: LoadPluginSections = async () => {
      loads += 1;
      return [echoSection];
    };
    await writeFile(join(state, "clawdis.json"), "{ plugins: { load: ['./echo'] }, gateway: { port: 'x' } }");
    await expect(loadConfigWithPlugins(env, [], load)).rejects.toMatchObject({ code: "CONFIG_INVALID" });
    await writeFile(join(state, "clawdis.json"), "{ plugins: { load: ['./echo'] }, relay: { tokn: 1 } }");
    await expect(loadConfigWithPlugins(env, [relay], load)).rejects.toMatchObject({ code: "CONFIG_INVALID" });
    await writeFile(join(state, "clawdis.json"), "{ gateway: { port: 1 } }");
    expect((await loadConfigWithPlugins(env, [], load)).config.gateway.port).toBe(1);
    expect(loads).toBe(0);
  });
});
