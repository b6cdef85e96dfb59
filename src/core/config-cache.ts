import { createHash } from "node:crypto";
import {
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  renameSync,
  unlinkSync,
  writeFileSync,
} from "node:fs";
import { join } from "node:path";
import { isDeepStrictEqual } from "node:util";
import type { LoadPluginSections } from "./config.js";
import type { ConfigFile, LoadedConfig, ValidatedConfig } from "./config-file.js";
import { assembleLoaded, readConfigFile, readConfigFileAt } from "./config-file.js";
import type { ConfigSectionEntry, ConfigSectionsSource } from "./config-sections.js";
import { type Env, stateDir } from "./paths.js";

/**
 * The validated config of read-only commands, cached by the file's content: `<state>/cache/config.<key>.json`
 * (0600, it holds what the file holds, tokens included), so that `clawdis sessions` and `clawdis status` with an
 * unchanged config load neither zod nor JSON5 nor the schema.
 *
 * Contract: a cache entry never lets through a file the schema would refuse.
 * - The key is the SHA-256 of the entry format, the schema's fingerprint (the start-up bundle's id: a hash of all
 *   the code, zod and every schema included), the view (core only, or with the built-in sections), and the
 *   file's exact text (or its absence). A changed byte, schema or view is another key: the file is validated in
 *   full again, and a refused file is never written to the cache, so it is refused with the same message.
 * - Only what depends on nothing but those is cached: the validated config (defaults applied) and the unchecked
 *   keys. Paths (store, workspace) depend on the environment and are resolved after the cache, every time.
 *   A config is not cached when a section's warnings may depend on the environment (an `unavailable` section,
 *   whose `enabled` may read a token variable), nor when the config does not survive a JSON round trip.
 * - Without a fingerprint (the compiled modules, not the bundle) there is no cache: every load validates.
 * - The cache is best effort: an entry that cannot be read or written is a miss; the newest entry replaces the
 *   others (one per state directory). Without a state directory nothing is written (a read-only command does not
 *   create it).
 */

/** Bumped when the entry's shape changes. */
const FORMAT = 1;

/** The config as a read-only command sees it: the core's keys only, or with the built-in sections. */
export type ConfigView = "core" | "builtin-sections";

interface CacheEntry {
  format: number;
  key: string;
  config: ValidatedConfig["config"];
  unchecked: ValidatedConfig["unchecked"];
}

/** The cache key of a config file's text (undefined: no file) for a schema fingerprint and a view. */
export function configCacheKey(text: string | undefined, fingerprint: string, view: ConfigView): string {
  const hash = createHash("sha256");
  hash.update(`clawdis-config-cache\0${FORMAT}\0${fingerprint}\0${view}\0`);
  hash.update(text === undefined ? "absent\0" : `file\0${text}`);
  return hash.digest("hex");
}

export function configCacheDir(env: Env): string {
  return join(stateDir(env), "cache");
}

function entryPath(env: Env, key: string): string {
  return join(configCacheDir(env), `config.${key}.json`);
}

function isObject(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === "object" && !Array.isArray(value);
}

/** The cached validation of `key`, or undefined (no entry, or one that is not an entry of this key). */
export function readCachedConfig(env: Env, key: string): ValidatedConfig | undefined {
  let entry: unknown;
  try {
    entry = JSON.parse(readFileSync(entryPath(env, key), "utf8"));
  } catch {
    return undefined;
  }
  if (!isObject(entry) || entry.format !== FORMAT || entry.key !== key) return undefined;
  if (!isObject(entry.config) || !Array.isArray(entry.unchecked)) return undefined;
  const { config, unchecked } = entry as unknown as CacheEntry;
  return { config, warnings: [], unchecked };
}

/**
 * Whether a validation may be cached: no warnings and no section whose warnings may follow the environment, and
 * a config that JSON gives back unchanged (what is read back is exactly what the schema returned).
 */
export function isCacheable(
  validated: ValidatedConfig,
  sections: readonly ConfigSectionEntry[] | undefined,
): boolean {
  if (validated.warnings.length > 0) return false;
  if (sections?.some((entry) => entry.unavailable !== undefined)) return false;
  const json = JSON.stringify({ config: validated.config, unchecked: validated.unchecked });
  return isDeepStrictEqual(JSON.parse(json), { config: validated.config, unchecked: validated.unchecked });
}

/** Writes the entry of `key` (0600, by rename) and removes the other entries; failures are ignored. */
export function writeCachedConfig(env: Env, key: string, validated: ValidatedConfig): void {
  const dir = configCacheDir(env);
  const entry: CacheEntry = {
    format: FORMAT,
    key,
    config: validated.config,
    unchecked: validated.unchecked,
  };
  const path = entryPath(env, key);
  const temp = `${path}.${process.pid}.tmp`;
  try {
    // Not recursive: a read-only command does not create the state directory itself.
    if (!existsSync(dir)) mkdirSync(dir, { mode: 0o700 });
    writeFileSync(temp, `${JSON.stringify(entry)}\n`, { mode: 0o600 });
    renameSync(temp, path);
    for (const name of readdirSync(dir)) {
      if (name.startsWith("config.") && name !== `config.${key}.json`) unlinkSync(join(dir, name));
    }
  } catch {
    try {
      unlinkSync(temp);
    } catch {
      // nothing was written
    }
  }
}

/**
 * `loadConfig(env, sections)` (config.ts) for read-only commands, through the cache when `fingerprint` is known.
 * `sections` is only asked on a miss (it loads the sections' schemas, and zod); for one fingerprint it must always
 * give the same sections (the build's built-in ones, from the composition root): the key knows only whether
 * there are sections, not which.
 * @throws as `loadConfig`: CONFIG_SYNTAX / CONFIG_INVALID (exit 2), IO.
 */
export async function loadConfigCached(
  env: Env,
  sections: ConfigSectionsSource | undefined,
  fingerprint: string | undefined,
): Promise<LoadedConfig> {
  const file: ConfigFile = readConfigFile(env);
  const key =
    fingerprint === undefined
      ? undefined
      : configCacheKey(file.text, fingerprint, sections ? "builtin-sections" : "core");
  const hit = key === undefined ? undefined : readCachedConfig(env, key);
  if (hit) return assembleLoaded(file, hit, env);
  const { validateConfigFile } = await import("./config.js");
  const entries = sections ? await sections(env) : undefined;
  const validated = validateConfigFile(file, entries);
  if (key !== undefined && isCacheable(validated, entries)) writeCachedConfig(env, key, validated);
  return assembleLoaded(file, validated, env);
}

/**
 * The gateway's config file at `path` as the config cache holds it, for a look at the file while the gateway runs
 * (runtime/config-reloader.ts): its text and the config validated from exactly that text (the view of
 * `loadGatewayConfigCached`), without loading zod or the schema. Undefined when there is no file, no fingerprint,
 * no entry for that text, or the config loads plugins (`plugins.load`): the caller then validates it.
 */
export function cachedGatewayConfigAt(
  env: Env,
  path: string,
  fingerprint: string | undefined,
): { loaded: LoadedConfig; text: string } | undefined {
  if (fingerprint === undefined) return undefined;
  let file: ConfigFile;
  try {
    file = readConfigFileAt(path, false, []);
  } catch {
    return undefined;
  }
  if (file.text === undefined) return undefined;
  const hit = gatewayHit(env, configCacheKey(file.text, fingerprint, "builtin-sections"));
  return hit && { loaded: assembleLoaded(file, hit, env), text: file.text };
}

/** The gateway's entry under `key`, when it may stand for a validation: one that loads no plugin. */
function gatewayHit(env: Env, key: string): ValidatedConfig | undefined {
  const hit = readCachedConfig(env, key);
  return hit && hit.config.plugins.load.length === 0 ? hit : undefined;
}

/**
 * The gateway's load at start (`loadConfigWithPlugins` with the built-in `sections`) through the same cache as
 * the read-only commands' built-in-sections view: for a file that loads no plugin (`plugins.load` empty) both
 * validate exactly alike (config.ts `loadConfigFileWithPlugins`), so an entry either wrote serves both. A hit
 * whose config names plugins is not used (their sections are known only by loading them): the full load runs.
 * A miss validates the text it hashed (not a second read of the file) and is cached when it loads no plugin.
 * @throws as `loadConfigWithPlugins`.
 */
export async function loadGatewayConfigCached(
  env: Env,
  sections: ConfigSectionsSource,
  fingerprint: string | undefined,
  loadSections: LoadPluginSections,
): Promise<LoadedConfig> {
  const file: ConfigFile = readConfigFile(env);
  const key =
    fingerprint === undefined ? undefined : configCacheKey(file.text, fingerprint, "builtin-sections");
  const hit = key === undefined ? undefined : gatewayHit(env, key);
  if (hit) return assembleLoaded(file, hit, env);
  const { loadConfigFileWithPlugins } = await import("./config.js");
  const entries = await sections(env);
  const loaded = await loadConfigFileWithPlugins(file, env, entries, loadSections);
  if (key !== undefined && hit === undefined && loaded.config.plugins.load.length === 0) {
    const validated: ValidatedConfig = {
      config: loaded.config,
      warnings: loaded.warnings,
      unchecked: loaded.unchecked,
    };
    if (isCacheable(validated, entries)) writeCachedConfig(env, key, validated);
  }
  return loaded;
}
