import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { defaultConfig, loadConfig, parseConfigText, resolveConfigRelativePath } from "./config.js";
import { ClawdisError, isClawdisError } from "./errors.js";
import type { Env } from "./paths.js";

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
    expect(loaded.config.gateway).toEqual({ port: 18789, bind: "127.0.0.1" });
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

  it("honours CLAWDIS_CONFIG_PATH, with ~ expanded, over the state dir", async () => {
    await writeFile(join(home, "custom.json5"), "{ whatsapp: { enabled: true } }");
    await writeFile(join(state, "clawdis.json"), "{ whatsapp: { enabled: false } }");
    const loaded = loadConfig({ ...env, CLAWDIS_CONFIG_PATH: "~/custom.json5" });
    expect(loaded.path).toBe(join(home, "custom.json5"));
    expect(loaded.config.whatsapp.enabled).toBe(true);
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
    const config = parseConfigText("{ /* c */ telegram: { allowFrom: [42, '-1001'], }, }", "clawdis.json");
    expect(config.telegram.allowFrom).toEqual([42, "-1001"]);
    expect(config.telegram.apiRoot).toBe("https://api.telegram.org");
  });

  it("rejects a top level that is not an object", () => {
    const error = thrown(() => parseConfigText("[1, 2]", "clawdis.json"));
    expect(error.code).toBe("CONFIG_INVALID");
    expect(error.message).toContain("(top level): expected an object, got [1,2] (clawdis.json line 1)");
  });

  it("reports every problem, one per line, in file order", () => {
    const text = [
      "{",
      "  telegram: { allowFrom: ['abc'] },",
      "  inbound: {",
      "    allowFrom: ['5551234'],",
      "    reply: { agent: { baseUrl: 'localhost:11434/v1', contextTokens: 1.5 } },",
      "  },",
      "  webhooks: { Deploy: {}, deploy: { token: 'short' } },",
      "  sessions: {},",
      "}",
    ].join("\n");
    const lines = thrown(() => parseConfigText(text, "clawdis.json")).message.split("\n");
    expect(lines.slice(1)).toEqual([
      '  telegram.allowFrom[0]: expected an integer or a numeric user id or "*", got "abc" (clawdis.json line 2)',
      '  inbound.allowFrom[0]: expected an E.164 number like "+4915123456789" or "*", got "5551234" (clawdis.json line 4)',
      '  inbound.reply.agent.baseUrl: expected an http:// or https:// URL like "http://127.0.0.1:11434/v1", got "localhost:11434/v1" (clawdis.json line 5)',
      "  inbound.reply.agent.contextTokens: expected an integer > 0, got 1.5 (clawdis.json line 5)",
      `  webhooks.Deploy: bad name "Deploy", expected a name of 1 to 64 lowercase letters, digits or '-' (clawdis.json line 7)`,
      '  webhooks.deploy.token: expected a string of at least 8 characters, got "short" (clawdis.json line 7)',
      "  sessions: unknown key (clawdis.json line 8) — did you mean inbound.reply.session or webhooks.<name>.session?",
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
    const text = "{ gateway: { port: 1 }, webhooks: { a: { session: 'x' }, b: { session: 'y' } } }";
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
