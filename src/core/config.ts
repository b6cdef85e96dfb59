import { dirname } from "node:path";
import JSON5 from "json5";
import type { z } from "zod";
import { closestMatch, formatConfigIssues, formatJson5SyntaxError } from "./config-errors.js";
import {
  assembleLoaded,
  type ConfigFile,
  type LoadedConfig,
  readConfigFile,
  readConfigFileAt,
  type UncheckedKey,
  type ValidatedConfig,
} from "./config-file.js";
import type { ClawdisConfig } from "./config-schema.js";
import { CORE_CONFIG_KEYS, type ConfigSectionEntry, composeConfigSchema } from "./config-sections.js";
import { ClawdisError } from "./errors.js";
import { isBlankJson5, locateJson5 } from "./json5-locate.js";
import type { Env } from "./paths.js";

/**
 * The configuration loader: `clawdis.json` (JSON5) -> a validated, fully defaulted config.
 *
 * Contract:
 * - Read at start; a running gateway reads its file again when it changes (`reloadConfigWithPlugins`,
 *   runtime/config-reloader.ts), through the same parse and validation.
 * - A missing file is not an error: every default, `exists: false`. A file with only comments/whitespace is `{}`.
 * - A file that does not parse or does not validate throws ClawdisError CONFIG_SYNTAX / CONFIG_INVALID
 *   (exit code 2) naming the key path, what was expected, what was found and the line. It is never replaced
 *   by defaults, in whole or in part.
 * - A key written twice in one object is CONFIG_INVALID too (JSON5 would keep the last value without a word).
 * - The schema is the core's keys plus the sections plugins own (config-sections.ts), each as strict as the core.
 *   The sections of the plugins in `plugins.load` are known only once those plugins are loaded: the gateway loads
 *   them (`loadConfigWithPlugins`); read-only commands do not (`loadConfig`), and accept a top-level key that no
 *   known section claims without checking it, when `plugins.load` names plugins (`LoadedConfig.unchecked`).
 */

export type { LoadedConfig, UncheckedKey, ValidatedConfig } from "./config-file.js";
export { resolveConfigRelativePath } from "./config-file.js";
export type { AgentConfig, ClawdisConfig, SessionConfig } from "./config-schema.js";
export { configSchema, defaultConfig } from "./config-schema.js";
export type { ConfigSectionEntry } from "./config-sections.js";

/** What becomes of a top-level key that neither the core nor a known section claims. */
export type UnclaimedKeys =
  /** An unknown key: a config error (did you mean …). */
  | "error"
  /** Accepted unchecked when `plugins.load` names plugins (it may be the section of one), else an error. */
  | "unchecked-when-plugins-load"
  /** Accepted unchecked: the core's view, for a command that reads only core keys. */
  | "unchecked";

export interface ConfigOptions {
  /** The sections to validate, besides the core's keys. */
  sections: readonly ConfigSectionEntry[];
  unclaimed: UnclaimedKeys;
}

const STRICT: ConfigOptions = { sections: [], unclaimed: "error" };

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === "object" && !Array.isArray(value);
}

/** JSON5 text -> value; a blank file is `{}`. @throws ClawdisError CONFIG_SYNTAX */
function parseJson5(text: string, fileLabel: string): unknown {
  try {
    return JSON5.parse(text);
  } catch (error) {
    if (isBlankJson5(text)) return {};
    throw new ClawdisError("CONFIG_SYNTAX", formatJson5SyntaxError(error, text, fileLabel), { cause: error });
  }
}

/** The top-level keys of `raw` that neither the core nor a section claims, and that `unclaimed` lets through. */
function uncheckedKeys(raw: unknown, claimed: ReadonlySet<string>, unclaimed: UnclaimedKeys): UncheckedKey[] {
  if (unclaimed === "error" || !isPlainObject(raw)) return [];
  if (unclaimed === "unchecked-when-plugins-load") {
    const load = isPlainObject(raw.plugins) ? raw.plugins.load : undefined;
    if (!Array.isArray(load) || load.length === 0) return [];
  }
  return Object.keys(raw)
    .filter((key) => !claimed.has(key))
    .map((key) => {
      const closest = closestMatch(key, [...claimed]);
      return closest === undefined ? { key } : { key, closest };
    });
}

/** `plugins.entries.<owner>.config` of a plugin that owns a section: its settings are in the section instead. */
function misplacedSettings(raw: unknown, entries: readonly ConfigSectionEntry[]): z.core.$ZodIssue[] {
  const pluginEntries = isPlainObject(raw) && isPlainObject(raw.plugins) ? raw.plugins.entries : undefined;
  if (!isPlainObject(pluginEntries)) return [];
  const issues: z.core.$ZodIssue[] = [];
  for (const { owner, section } of entries) {
    const entry = Object.hasOwn(pluginEntries, owner) ? pluginEntries[owner] : undefined;
    if (!isPlainObject(entry) || entry.config === undefined) continue;
    issues.push({
      code: "custom",
      path: ["plugins", "entries", owner, "config"],
      message: `plugin "${owner}" takes its settings from the top-level section "${section.key}", not from here: move them there`,
      input: entry.config,
    });
  }
  return issues;
}

/**
 * Validates a parsed config. `text` is the file's text (for lines in messages; "" when there is no file).
 * @throws ClawdisError CONFIG_INVALID (schema, duplicate key, settings in the wrong place), PLUGIN_INVALID (a
 * section that cannot be composed).
 */
function validateValue(
  raw: unknown,
  text: string,
  fileLabel: string,
  options: ConfigOptions,
): ValidatedConfig {
  const claimed = new Set([...CORE_CONFIG_KEYS, ...options.sections.map((entry) => entry.section.key)]);
  const unchecked = uncheckedKeys(raw, claimed, options.unclaimed);
  const schema = composeConfigSchema(
    options.sections,
    unchecked.map(({ key }) => key),
  );
  const result = schema.safeParse(raw);
  const misplaced = misplacedSettings(raw, options.sections);
  const hasDuplicates = locateJson5(text).duplicates().length > 0;
  if (result.success && !hasDuplicates && misplaced.length === 0) {
    const config = result.data;
    const warnings: string[] = [];
    for (const { section, unavailable } of options.sections) {
      const value = config[section.key];
      if (unavailable && (section.enabled?.(value) ?? true)) warnings.push(unavailable(value));
    }
    return { config, warnings, unchecked };
  }
  const issues = [...(result.success ? [] : result.error.issues), ...misplaced];
  const lines = formatConfigIssues(issues, raw, text, fileLabel, schema);
  const message = [`invalid config ${fileLabel}:`, ...lines.map((line) => `  ${line}`)].join("\n");
  throw new ClawdisError("CONFIG_INVALID", message, result.success ? {} : { cause: result.error });
}

/**
 * Parses and validates config text. `fileLabel` names the file in messages: the whole label heads the
 * message, its base name appears in each line ("(clawdis.json line 7)"). Default: the core's keys only, strictly.
 * @throws ClawdisError CONFIG_SYNTAX (not JSON5), CONFIG_INVALID (does not match the schema, a duplicate key, a
 * plugin's settings outside its section) or PLUGIN_INVALID (a section that cannot be composed).
 */
export function validateConfigText(
  text: string,
  fileLabel: string,
  options: ConfigOptions = STRICT,
): ValidatedConfig {
  return validateValue(parseJson5(text, fileLabel), text, fileLabel, options);
}

/** `validateConfigText(…).config`. */
export function parseConfigText(
  text: string,
  fileLabel: string,
  options: ConfigOptions = STRICT,
): ClawdisConfig {
  return validateConfigText(text, fileLabel, options).config;
}

/** A file's validation; no file is `{}` through the same schema (every section's defaults and warnings). */
function validateFile(file: ConfigFile, options: ConfigOptions): ValidatedConfig {
  return file.text === undefined
    ? validateValue({}, "", file.path, options)
    : validateConfigText(file.text, file.path, options);
}

function loaded(file: ConfigFile, options: ConfigOptions, env: Env): LoadedConfig {
  return assembleLoaded(file, validateFile(file, options), env);
}

/**
 * Loads the config at `configPath(env)` (env `CLAWDIS_CONFIG_PATH`, else `<state>/clawdis.json`) without loading
 * any plugin: for commands that only read it (`sessions`, `status`, `doctor`).
 * - With `sections` (the built-in ones, from the composition root): the core and those sections are validated
 *   strictly; a top-level key that no section claims is accepted unchecked (and listed in `unchecked`) only when
 *   `plugins.load` names plugins, whose sections are not known without loading them.
 * - Without: the core's view, for a command that reads only core keys: every other top-level key is unchecked.
 * @throws ClawdisError CONFIG_SYNTAX / CONFIG_INVALID (exit 2), or IO when the file exists but cannot be read.
 */
export function loadConfig(env: Env = process.env, sections?: readonly ConfigSectionEntry[]): LoadedConfig {
  const file = readConfigFile(env);
  return assembleLoaded(file, validateConfigFile(file, sections), env);
}

/**
 * The validation `loadConfig` makes of a file already read (config-cache.ts caches it): with `sections`, those
 * and the core strictly, unclaimed keys unchecked only when `plugins.load` names plugins; without, the core's view.
 * @throws as `loadConfig`.
 */
export function validateConfigFile(
  file: ConfigFile,
  sections?: readonly ConfigSectionEntry[],
): ValidatedConfig {
  const options: ConfigOptions =
    sections === undefined
      ? { sections: [], unclaimed: "unchecked" }
      : { sections, unclaimed: "unchecked-when-plugins-load" };
  return validateFile(file, options);
}

/**
 * The sections of the plugins in `plugins.load`, in order; `baseDir` is the config file's folder. Plugins without a
 * section contribute nothing.
 */
export type LoadPluginSections = (
  specs: readonly string[],
  baseDir: string,
) => Promise<readonly ConfigSectionEntry[]>;

/**
 * The gateway's load, in two phases: the file is parsed and validated with what is known without loading a
 * plugin (the core and `sections`); a config that fails there loads nothing. Then the plugins of `plugins.load`
 * are loaded for their sections, and the whole file is validated again, strictly: every top-level key belongs to
 * the core or to a section.
 * @throws as `loadConfig`, and whatever `loadSections` throws (PLUGIN_INVALID for a plugin that does not load).
 */
export async function loadConfigWithPlugins(
  env: Env,
  sections: readonly ConfigSectionEntry[],
  loadSections: LoadPluginSections,
): Promise<LoadedConfig> {
  return loadConfigFileWithPlugins(readConfigFile(env), env, sections, loadSections);
}

/** What a running gateway reads again when its config file changed (`reloadConfigWithPlugins`). */
export type ReloadedConfig =
  /** `text`: exactly the text that was validated (for the digest the gateway reports). */
  | { exists: true; loaded: LoadedConfig; text: string }
  /** The file is gone (deleted, or in the middle of an editor's save-by-rename). */
  | { exists: false };

/**
 * The gateway's load again, for a config file that changed while it runs: the file at `path` (the one it
 * loaded at start, not a path chosen afresh), parsed and validated exactly as `loadConfigWithPlugins` does at
 * start, with the same messages (key path, line). A missing file is `{ exists: false }`, never the defaults.
 * @throws as `loadConfigWithPlugins`.
 */
export async function reloadConfigWithPlugins(
  path: string,
  env: Env,
  sections: readonly ConfigSectionEntry[],
  loadSections: LoadPluginSections,
): Promise<ReloadedConfig> {
  const file = readConfigFileAt(path, false, []);
  if (file.text === undefined) return { exists: false };
  return {
    exists: true,
    loaded: await loadConfigFileWithPlugins(file, env, sections, loadSections),
    text: file.text,
  };
}

/**
 * `loadConfigWithPlugins` of a file already read (config-cache.ts hashes the text it validates). A file that
 * loads no plugin is validated once: with `plugins.load` empty the first phase already treats every unclaimed
 * key as an error, exactly as the second would, so its result is the answer (and equals `validateConfigFile`
 * with the same sections).
 */
export async function loadConfigFileWithPlugins(
  file: ConfigFile,
  env: Env,
  sections: readonly ConfigSectionEntry[],
  loadSections: LoadPluginSections,
): Promise<LoadedConfig> {
  const known = loaded(file, { sections, unclaimed: "unchecked-when-plugins-load" }, env);
  const specs = known.config.plugins.load;
  if (specs.length === 0) return known;
  const external = await loadSections(specs, dirname(file.path));
  return loaded(file, { sections: [...sections, ...external], unclaimed: "error" }, env);
}
