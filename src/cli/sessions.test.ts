import { mkdir, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { ManualClock } from "../core/clock.js";
import { loadConfig } from "../core/config.js";
import { isClawdisError } from "../core/errors.js";
import { recordingIO } from "./io.js";
import { type CliDeps, runCli } from "./program.js";
import { runSessions, withoutConfigFile } from "./sessions.js";

let state: string;
let storePath: string;
const clock = new ManualClock(Date.UTC(2026, 5, 1, 12));
const now = clock.now();
const MIN = 60_000;

const fakeIO = recordingIO;

const store = {
  main: {
    sessionId: "main-id",
    updatedAt: now - 3 * MIN,
    model: "gpt-4o",
    contextTokens: 12_300,
    thinkingLevel: "high",
    custom: { kept: true },
    title: "Trip\tto  Lisbon",
  },
  "group:-1001234": { sessionId: "grp-id", updatedAt: now - 2 * 60 * MIN },
  global: { sessionId: "glob-id", updatedAt: now - 5 * 24 * 60 * MIN },
};

beforeEach(async () => {
  state = await mkdtemp(join(tmpdir(), "clawdis-sessions-cli-"));
  storePath = join(state, "sessions", "sessions.json");
  await mkdir(join(state, "sessions"));
  await writeFile(storePath, JSON.stringify(store, null, 2));
});

afterEach(async () => {
  await rm(state, { recursive: true, force: true });
});

const env = () => ({ CLAWDIS_STATE_DIR: state, HOME: state });

describe("clawdis sessions --json", () => {
  it("prints only JSON: path, count, activeMinutes and the sessions newest first", async () => {
    const io = fakeIO(env());
    expect(await runSessions({ json: true }, io, clock)).toBe(0);
    expect(io.err).toBe("");
    const report = JSON.parse(io.out);
    expect(report.path).toBe(storePath);
    expect(report.count).toBe(3);
    expect(report.activeMinutes).toBeNull();
    expect(report.sessions).toEqual([
      { key: "main", kind: "direct", ageMs: 3 * MIN, ...store.main },
      { key: "group:-1001234", kind: "group", ageMs: 2 * 60 * MIN, ...store["group:-1001234"] },
      { key: "global", kind: "global", ageMs: 5 * 24 * 60 * MIN, ...store.global },
    ]);
  });

  it("--active keeps the sessions updated within N minutes", async () => {
    const io = fakeIO(env());
    expect(await runSessions({ json: true, active: "180" }, io, clock)).toBe(0);
    const report = JSON.parse(io.out);
    expect(report.activeMinutes).toBe(180);
    expect(report.count).toBe(2);
    expect(report.sessions.map((s: { key: string }) => s.key)).toEqual(["main", "group:-1001234"]);
  });

  it.each(["0", "abc", "-3", ""])(
    "--active %j is bad usage: exit 2, message on stderr, nothing on stdout",
    async (value) => {
      const io = fakeIO(env());
      expect(await runSessions({ json: true, active: value }, io, clock)).toBe(2);
      expect(io.out).toBe("");
      expect(io.err).toContain("--active expects a positive number of minutes");
    },
  );

  it("--store reads that store (with ~ expanded) and ignores a broken config", async () => {
    await writeFile(join(state, "clawdis.json"), "{ inbound: { nonsense: true } }");
    await writeFile(join(state, "other.json"), JSON.stringify({ only: { sessionId: "x", updatedAt: now } }));
    const io = fakeIO(env());
    expect(await runSessions({ json: true, store: "~/other.json" }, io, clock)).toBe(0);
    const report = JSON.parse(io.out);
    expect(report.path).toBe(join(state, "other.json"));
    expect(report.sessions.map((s: { key: string }) => s.key)).toEqual(["only"]);
    // The table also works without a usable config (no context window then).
    const human = fakeIO(env(), true);
    expect(await runSessions({ store: "~/other.json" }, human, clock)).toBe(0);
    expect(human.out).toContain("only");
  });

  it("--store accepts the directory holding sessions.json", async () => {
    const io = fakeIO(env());
    expect(await runSessions({ json: true, store: join(state, "sessions") }, io, clock)).toBe(0);
    expect(JSON.parse(io.out).path).toBe(storePath);
  });

  it("uses the configured store path", async () => {
    await writeFile(join(state, "elsewhere.json"), JSON.stringify({ x: { sessionId: "x", updatedAt: now } }));
    await writeFile(
      join(state, "clawdis.json"),
      '{ inbound: { reply: { session: { store: "~/elsewhere.json" } } } }',
    );
    const io = fakeIO(env());
    expect(await runSessions({ json: true }, io, clock)).toBe(0);
    expect(JSON.parse(io.out).path).toBe(join(state, "elsewhere.json"));
  });

  it("a broken config ends the command with exit 2 and the config's message", async () => {
    await writeFile(join(state, "clawdis.json"), "{ inbound: { nonsense: true } }");
    await expect(runSessions({ json: true }, fakeIO(env()), clock)).rejects.toMatchObject({ exitCode: 2 });
    const io = fakeIO(env());
    const deps: CliDeps = {
      version: "0.0.0",
      builtinPlugins: async () => [],
      configSections: async () => [],
      terminalChat: async () => {
        throw new Error("not used by this command");
      },
    };
    expect(await runCli(["sessions", "--json"], io, deps)).toBe(2);
    expect(io.out).toBe("");
    expect(io.err).toContain("nonsense");
  });

  it("a missing store is an empty list", async () => {
    await rm(storePath);
    const io = fakeIO(env());
    expect(await runSessions({ json: true }, io, clock)).toBe(0);
    expect(JSON.parse(io.out)).toEqual({ path: storePath, count: 0, activeMinutes: null, sessions: [] });
  });

  it("names unusable entries on stderr and leaves them out", async () => {
    await writeFile(storePath, JSON.stringify({ ...store, broken: { updatedAt: now } }));
    const io = fakeIO(env());
    expect(await runSessions({ json: true }, io, clock)).toBe(0);
    expect(JSON.parse(io.out).count).toBe(3);
    expect(io.err).toContain('"broken"');
  });

  it("a store that does not parse is reported (exit 1) and left as it is", async () => {
    await writeFile(storePath, "{ not json");
    let thrown: unknown;
    try {
      await runSessions({ json: true }, fakeIO(env()), clock);
    } catch (error) {
      thrown = error;
    }
    expect(isClawdisError(thrown, "STORE_CORRUPT")).toBe(true);
    expect((thrown as Error).message).toContain(storePath);
    expect(await readFile(storePath, "utf8")).toBe("{ not json");
  });
});

describe("clawdis sessions (human)", () => {
  it("prints a table on a terminal: kind, key, age, model, context used of the configured window", async () => {
    const io = fakeIO(env(), true);
    expect(await runSessions({}, io, clock)).toBe(0);
    const lines = io.out.trimEnd().split("\n");
    expect(lines[0]).toBe(`3 sessions in ${storePath}`);
    expect(lines[2]).toMatch(/^KIND\s+KEY\s+AGE\s+MODEL\s+CONTEXT\s+SESSION ID\s+TITLE$/);
    expect(lines[3]).toMatch(
      /^direct\s+main\s+3m\s+gpt-4o\s+12\.3k\/128k \(9%\)\s+main-id\s+Trip to Lisbon$/,
    );
    expect(lines[4]).toMatch(/^group\s+group:-1001234\s+2h\s+-\s+-\s+grp-id\s+-$/);
    expect(lines[5]).toMatch(/^global\s+global\s+5d\s/);
  });

  it("uses the configured context window", async () => {
    await writeFile(
      join(state, "clawdis.json"),
      "{ inbound: { reply: { agent: { contextTokens: 32000 } } } }",
    );
    const io = fakeIO(env(), true);
    expect(await runSessions({}, io, clock)).toBe(0);
    expect(io.out).toContain("12.3k/32k (38%)");
  });

  it("prints one tab-separated line per session when stdout is not a terminal", async () => {
    const io = fakeIO(env(), false);
    expect(await runSessions({}, io, clock)).toBe(0);
    expect(io.out.trimEnd().split("\n")).toEqual([
      "direct\tmain\t3m\tgpt-4o\t12.3k/128k (9%)\tmain-id\tTrip to Lisbon",
      "group\tgroup:-1001234\t2h\t-\t-\tgrp-id\t-",
      "global\tglobal\t5d\t-\t-\tglob-id\t-",
    ]);
  });

  it("says so when there are no sessions", async () => {
    await writeFile(storePath, "{}\n");
    const io = fakeIO(env(), true);
    expect(await runSessions({ active: "5" }, io, clock)).toBe(0);
    expect(io.out).toBe(`no sessions active in the last 5 min (store ${storePath})\n`);
  });
});

describe("without a config file", () => {
  it("knows the store path and context window the config loader gives for no file", () => {
    const loaded = loadConfig(env());
    expect(loaded.exists).toBe(false);
    expect(withoutConfigFile(env())).toEqual({
      storePath: loaded.storePath,
      contextWindow: loaded.config.inbound.reply.agent.contextTokens,
    });
  });

  it.each(["clawdis.json", "clawdis.json5"])("is not used when %s exists", async (name) => {
    await writeFile(join(state, name), "{ inbound: { reply: { agent: { contextTokens: 32000 } } } }");
    expect(withoutConfigFile(env())).toBeUndefined();
    const io = fakeIO(env(), false);
    expect(await runSessions({}, io, clock)).toBe(0);
    expect(io.out).toContain("12.3k/32k (38%)");
  });

  it("is not used when CLAWDIS_CONFIG_PATH names a file: a missing one is still a config error", async () => {
    const named = { ...env(), CLAWDIS_CONFIG_PATH: join(state, "missing.json") };
    expect(withoutConfigFile(named)).toBeUndefined();
    await expect(runSessions({ json: true }, fakeIO(named), clock)).rejects.toMatchObject({
      code: "CONFIG_INVALID",
      exitCode: 2,
    });
  });

  it("--store with a table uses the default context window", async () => {
    const io = fakeIO(env(), false);
    expect(await runSessions({ store: storePath }, io, clock)).toBe(0);
    expect(io.out).toContain("12.3k/128k (9%)");
  });
});
