import { mkdir, mkdtemp, readdir, readFile, rm, stat, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { z } from "zod";
import { builtinConfigSections } from "../main.js";
import { type LoadedConfig, loadConfig, loadConfigWithPlugins } from "./config.js";
import {
  cachedGatewayConfigAt,
  configCacheDir,
  configCacheKey,
  loadConfigCached,
  loadGatewayConfigCached,
} from "./config-cache.js";
import { type ConfigSectionsSource, sectionEntry } from "./config-sections.js";
import { ClawdisError } from "./errors.js";
import type { Env } from "./paths.js";
import { sectionSchema } from "./section-schema.js";

let home: string;
let state: string;
let env: Env;
/** How many times the sections were asked for: each is a miss (a hit loads no schema). */
let asked: number;

const FINGERPRINT = "test-schema-1";

/** The real built-in sections (telegram, whatsapp, webhooks), counting the calls. */
const sections: ConfigSectionsSource = async (e) => {
  asked++;
  return builtinConfigSections(e);
};

/** A real user's config: a model, an allowlist, a Telegram section. */
const GOOD = `{
  // a comment
  inbound: { allowFrom: ["+15555550123"], reply: { agent: { model: "gpt-4o-mini" } } },
  telegram: { botToken: "123:abc", allowFrom: [123456789] },
}
`;

beforeEach(async () => {
  home = await mkdtemp(join(tmpdir(), "clawdis-config-cache-"));
  state = join(home, ".clawdis");
  await mkdir(state, { recursive: true });
  env = { HOME: home, CLAWDIS_STATE_DIR: state };
  asked = 0;
});

afterEach(async () => {
  await rm(home, { recursive: true, force: true });
});

const configFile = () => join(state, "clawdis.json");
const entries = async () => (await readdir(configCacheDir(env)).catch(() => [])).sort();

async function rejection(promise: Promise<unknown>): Promise<ClawdisError> {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  if (!(error instanceof ClawdisError)) throw new Error(`expected a ClawdisError, got ${String(error)}`);
  return error;
}

/** Loads GOOD twice: the first a miss that writes the entry, the second a hit. */
async function warm(): Promise<LoadedConfig> {
  await writeFile(configFile(), GOOD);
  await loadConfigCached(env, sections, FINGERPRINT);
  const hit = await loadConfigCached(env, sections, FINGERPRINT);
  expect(asked).toBe(1);
  expect(await entries()).toEqual([`config.${configCacheKey(GOOD, FINGERPRINT, "builtin-sections")}.json`]);
  return hit;
}

describe("the config cache of read-only commands", () => {
  it("a hit gives what loadConfig gives, without asking for the sections; the entry is 0600", async () => {
    const hit = await warm();
    expect(hit).toEqual(loadConfig(env, await builtinConfigSections(env)));
    expect((hit.config as Record<string, unknown>).telegram).toMatchObject({
      botToken: "123:abc",
      apiRoot: "https://api.telegram.org",
    });
    const [name] = await entries();
    expect((await stat(join(configCacheDir(env), name ?? ""))).mode & 0o777).toBe(0o600);
  });

  // Each refused with a warm cache (an entry of the good file present), with loadConfig's own message.
  const bad: [string, string, string][] = [
    ["not JSON5", "{ inbound: { allowFrom: [ }", "line 1, column 27"],
    ["a wrong type", `{ inbound: { reply: { agent: { model: 42 } } } }`, "inbound.reply.agent.model"],
    ["an unknown key", `{ inbound: { allowFrm: [] } }`, "inbound.allowFrm"],
    ["a duplicate key", `{ inbound: { allowFrom: [], allowFrom: [] } }`, "allowFrom"],
    ["a bad Telegram allowlist entry", `{ telegram: { allowFrom: ["bob"] } }`, "telegram.allowFrom[0]"],
    [
      "a section's own rule (webhookUrl needs webhookSecret)",
      `{ telegram: { webhookUrl: "https://bot.example.org/hook" } }`,
      "telegram.webhookSecret",
    ],
    ["an unknown top-level key", `{ telegramm: {} }`, "telegramm"],
    [
      "the good file with one byte changed",
      GOOD.replace("123456789", '"x23456789"'),
      "telegram.allowFrom[0]",
    ],
  ];
  it.each(bad)("refuses %s with the cache warm: exit 2, the key path", async (_what, text, named) => {
    await warm();
    await writeFile(configFile(), text);
    const cached = await rejection(loadConfigCached(env, sections, FINGERPRINT));
    expect(cached.exitCode).toBe(2);
    expect(cached.message).toContain(named);
    const plain = await rejection(Promise.resolve().then(async () => loadConfig(env, await sections(env))));
    expect(cached.message).toBe(plain.message);
    // Refused files leave nothing in the cache: the good file's entry only.
    expect(await entries()).toEqual([`config.${configCacheKey(GOOD, FINGERPRINT, "builtin-sections")}.json`]);
  });

  it("the core's view does not stand in for the sections' view of the same file", async () => {
    const text = `{ telegram: { allowFrom: ["bob"] } }`;
    await writeFile(configFile(), text);
    // Without sections every section is unchecked: accepted, and cached for that view.
    const core = await loadConfigCached(env, undefined, FINGERPRINT);
    expect(core.unchecked.map(({ key }) => key)).toEqual(["telegram"]);
    const error = await rejection(loadConfigCached(env, sections, FINGERPRINT));
    expect(error.message).toContain("telegram.allowFrom[0]");
  });

  it("a changed file misses, and the new entry replaces the old", async () => {
    await warm();
    const changed = GOOD.replace("gpt-4o-mini", "gpt-4o");
    await writeFile(configFile(), changed);
    const loaded = await loadConfigCached(env, sections, FINGERPRINT);
    expect(asked).toBe(2);
    expect(loaded.config.inbound.reply.agent.model).toBe("gpt-4o");
    expect(await entries()).toEqual([
      `config.${configCacheKey(changed, FINGERPRINT, "builtin-sections")}.json`,
    ]);
  });

  it("a changed schema (another fingerprint) misses", async () => {
    await warm();
    await loadConfigCached(env, sections, "test-schema-2");
    expect(asked).toBe(2);
  });

  it("without a fingerprint nothing is cached", async () => {
    await writeFile(configFile(), GOOD);
    await loadConfigCached(env, sections, undefined);
    await loadConfigCached(env, sections, undefined);
    expect(asked).toBe(2);
    expect(await entries()).toEqual([]);
  });

  it("a state directory that does not exist is not created", async () => {
    await writeFile(configFile(), GOOD);
    const missing = join(home, "no-state");
    const loaded = await loadConfigCached(
      { ...env, CLAWDIS_STATE_DIR: missing, CLAWDIS_CONFIG_PATH: configFile() },
      sections,
      FINGERPRINT,
    );
    expect(loaded.config.inbound.reply.agent.model).toBe("gpt-4o-mini");
    await expect(stat(missing)).rejects.toThrow(/ENOENT/);
  });

  it("paths are resolved after the cache: the same text in another folder names another store", async () => {
    const text = `{ inbound: { reply: { session: { store: "s/sessions.json" } } } }`;
    const a = join(home, "a", "clawdis.json");
    const b = join(home, "b", "clawdis.json");
    for (const path of [a, b]) {
      await mkdir(join(path, ".."), { recursive: true });
      await writeFile(path, text);
    }
    const first = await loadConfigCached({ ...env, CLAWDIS_CONFIG_PATH: a }, sections, FINGERPRINT);
    const second = await loadConfigCached({ ...env, CLAWDIS_CONFIG_PATH: b }, sections, FINGERPRINT);
    expect(asked).toBe(1);
    expect(first.storePath).toBe(join(home, "a", "s", "sessions.json"));
    expect(second.storePath).toBe(join(home, "b", "s", "sessions.json"));
  });

  it("a section whose warnings may follow the environment is never cached", async () => {
    const relay = sectionEntry(
      "relay",
      {
        key: "relay",
        schema: z.strictObject({ url: z.string().optional() }).default({}),
        enabled: () => env.RELAY_TOKEN !== undefined,
        describe: {},
      },
      () => "relay is set but this build has no relay plugin",
    );
    const withRelay: ConfigSectionsSource = async () => {
      asked++;
      return [relay];
    };
    await writeFile(configFile(), `{ relay: { url: "x" } }`);
    env = { ...env, RELAY_TOKEN: "t" };
    expect((await loadConfigCached(env, withRelay, FINGERPRINT)).warnings).toEqual([
      "relay is set but this build has no relay plugin",
    ]);
    await loadConfigCached(env, withRelay, FINGERPRINT);
    expect(asked).toBe(2);
    expect(await entries()).toEqual([]);
  });
});

describe("the gateway's start through the config cache", () => {
  /** The plugins' sections, as the gateway would load them; counts the loads. */
  let pluginLoads: string[][];
  const loadSections = async (specs: readonly string[]) => {
    pluginLoads.push([...specs]);
    return [];
  };
  beforeEach(() => {
    pluginLoads = [];
  });

  it("a restart with the same file validates nothing: the read-only commands' entry serves it, and it theirs", async () => {
    const hit = await warm();
    const started = await loadGatewayConfigCached(env, sections, FINGERPRINT, loadSections);
    expect(asked).toBe(1);
    expect(started).toEqual(hit);
    expect(started).toEqual(await loadConfigWithPlugins(env, await builtinConfigSections(env), loadSections));
    // The entry is what a hit returns: a value written into it comes back (the load did not validate).
    const [name] = await entries();
    const path = join(configCacheDir(env), name ?? "");
    const entry = JSON.parse(await readFile(path, "utf8")) as { config: { logging: { level: string } } };
    entry.config.logging.level = "debug";
    await writeFile(path, JSON.stringify(entry));
    expect(
      (await loadGatewayConfigCached(env, sections, FINGERPRINT, loadSections)).config.logging.level,
    ).toBe("debug");
  });

  it("a look while it runs (cachedGatewayConfigAt): the start's entry for the same text, nothing for an edit", async () => {
    await writeFile(configFile(), GOOD);
    const started = await loadGatewayConfigCached(env, sections, FINGERPRINT, loadSections);
    const look = cachedGatewayConfigAt(env, configFile(), FINGERPRINT);
    expect(look).toEqual({ loaded: started, text: GOOD });
    expect(asked).toBe(1);
    expect(cachedGatewayConfigAt(env, configFile(), "another-schema")).toBeUndefined();
    expect(cachedGatewayConfigAt(env, configFile(), undefined)).toBeUndefined();
    await writeFile(configFile(), GOOD.replace("gpt-4o-mini", "gpt-4o"));
    expect(cachedGatewayConfigAt(env, configFile(), FINGERPRINT)).toBeUndefined();
    await rm(configFile());
    expect(cachedGatewayConfigAt(env, configFile(), FINGERPRINT)).toBeUndefined();
  });

  it("a first start writes the entry, from the text it validated", async () => {
    await writeFile(configFile(), GOOD);
    const first = await loadGatewayConfigCached(env, sections, FINGERPRINT, loadSections);
    expect(asked).toBe(1);
    expect(await entries()).toEqual([`config.${configCacheKey(GOOD, FINGERPRINT, "builtin-sections")}.json`]);
    expect(await loadGatewayConfigCached(env, sections, FINGERPRINT, loadSections)).toEqual(first);
    expect(asked).toBe(1);
  });

  it("a file the schema refuses is refused at every start, and never cached", async () => {
    await writeFile(configFile(), `{ inbound: { reply: { agent: { model: 5 } } } }`);
    for (let i = 0; i < 2; i++) {
      const error = await rejection(loadGatewayConfigCached(env, sections, FINGERPRINT, loadSections));
      expect(error.code).toBe("CONFIG_INVALID");
      expect(error.message).toContain("inbound.reply.agent.model");
    }
    expect(asked).toBe(2);
    expect(await entries()).toEqual([]);
  });

  it("a file that loads plugins is validated with their sections at every start, even with an entry cached", async () => {
    const text = `{ plugins: { load: ["./my-plugin.js"] } }`;
    await writeFile(configFile(), text);
    // A read-only command caches its view of the file (the plugin's keys unchecked).
    await loadConfigCached(env, sections, FINGERPRINT);
    expect(await entries()).toHaveLength(1);
    for (let i = 0; i < 2; i++) await loadGatewayConfigCached(env, sections, FINGERPRINT, loadSections);
    expect(pluginLoads).toEqual([["./my-plugin.js"], ["./my-plugin.js"]]);
    expect(asked).toBe(3);
  });

  it("a file that loads no plugin is validated once, as the read-only commands validate it", async () => {
    await writeFile(configFile(), GOOD);
    let validations = 0;
    const counting: ConfigSectionsSource = async (e) =>
      (await builtinConfigSections(e)).map((entry) => ({
        ...entry,
        section: {
          ...entry.section,
          schema: (sectionSchema(entry.section) as z.ZodType).transform((value: unknown) => {
            validations++;
            return value;
          }),
        },
      }));
    const once = loadConfig(env, await counting(env));
    const perValidation = validations;
    expect(perValidation).toBeGreaterThan(0);
    const loaded = await loadGatewayConfigCached(env, counting, undefined, loadSections);
    expect(validations - perValidation).toBe(perValidation);
    expect(loaded).toEqual(once);
  });
});
