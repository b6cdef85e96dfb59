import { z } from "zod";
import type { PluginConfigSection } from "../plugin-api/types.js";
import { type ClawdisConfig, configSchema } from "./config-schema.js";
import { ClawdisError } from "./errors.js";
import { sectionSchema } from "./section-schema.js";

/**
 * Plugin-owned config sections and the root schema composed from them. The core never imports `plugins/`: the
 * composition root (src/main.ts) hands the built-in sections in, the plugin loader those of `plugins.load`.
 */

/** A config section as the loader gets it: the section, whose it is, and whether a plugin runs it. */
export interface ConfigSectionEntry {
  /** The id of the plugin that owns the section, for messages. */
  owner: string;
  section: PluginConfigSection<unknown>;
  /**
   * Only for a section registered without a plugin to run it (a transport this build does not have): the one
   * warning line given when the section asks for its plugin (`section.enabled`), naming the key that asks.
   */
  unavailable?: (value: unknown) => string;
}

/** Where a command gets the sections known without loading a plugin (the composition root's list). */
export type ConfigSectionsSource = (
  env: Readonly<Record<string, string | undefined>>,
) => Promise<readonly ConfigSectionEntry[]>;

/** The value handed to `unavailable` is the section as its own schema parsed it. */
export function sectionEntry<C>(
  owner: string,
  section: PluginConfigSection<C>,
  unavailable?: (value: C) => string,
): ConfigSectionEntry {
  const entry: ConfigSectionEntry = { owner, section: section as PluginConfigSection<unknown> };
  if (unavailable) entry.unavailable = (value) => unavailable(value as C);
  return entry;
}

/** The top-level keys the core owns; no section may take one. */
export const CORE_CONFIG_KEYS: readonly string[] = Object.keys(configSchema.shape);

/** Section keys: a word a person can type unquoted (`telegram`, `echo-transport`), like the core's own keys. */
const SECTION_KEY = /^[a-z][A-Za-z0-9-]{0,63}$/;

function isZodSchema(value: unknown): value is z.ZodType {
  const candidate = value as { safeParse?: unknown; _zod?: unknown } | null | undefined;
  return typeof candidate?.safeParse === "function" && typeof candidate._zod === "object";
}

/** What is wrong with one declaration, in words, or nothing. */
function declarationProblems(section: PluginConfigSection<unknown>): string[] {
  const problems: string[] = [];
  if (typeof section.key !== "string" || !SECTION_KEY.test(section.key)) {
    problems.push(
      `its key ${JSON.stringify(section.key)} is not a word of 1-64 letters, digits and dashes starting with a lowercase letter`,
    );
  } else if (CORE_CONFIG_KEYS.includes(section.key)) {
    problems.push(
      `its key "${section.key}" is one of the core's own sections (${CORE_CONFIG_KEYS.join(", ")})`,
    );
  }
  const schema = sectionSchema(section);
  if (typeof section.schema === "function" && schema === undefined) {
    problems.push("its schema was not loaded (section-schema.ts withSchemas comes before validation)");
  } else if (!isZodSchema(schema)) {
    problems.push("its schema is not a zod 4 schema");
  } else if (!schema.safeParse(undefined).success) {
    problems.push("its schema refuses a config without the section: give it defaults (e.g. .default({}))");
  }
  if (section.enabled !== undefined && typeof section.enabled !== "function") {
    problems.push("enabled must be a function");
  }
  const describe = section.describe as unknown;
  if (
    describe === null ||
    typeof describe !== "object" ||
    Array.isArray(describe) ||
    Object.values(describe).some((text) => typeof text !== "string")
  ) {
    problems.push("describe must map each key path to a line of text");
  }
  return problems;
}

/** The composed root schema: its output is the core's config plus each section's value under its key. */
export type ComposedConfigSchema = z.ZodType<ClawdisConfig & { readonly [section: string]: unknown }>;

/**
 * The root schema: the core's keys plus one strict top-level key per section, plus `unchecked` keys that take any
 * value. Throws ClawdisError PLUGIN_INVALID naming the plugin for a declaration that cannot be composed (a bad or
 * taken key, a schema that is not zod or that refuses a missing section, two plugins claiming one key).
 */
export function composeConfigSchema(
  entries: readonly ConfigSectionEntry[],
  unchecked: readonly string[] = [],
): ComposedConfigSchema {
  const shape: Record<string, z.ZodType> = {};
  const owners = new Map<string, string>();
  for (const { owner, section } of entries) {
    const problems = declarationProblems(section);
    if (problems.length > 0) {
      throw new ClawdisError(
        "PLUGIN_INVALID",
        `Plugin "${owner}" declares a config section that cannot be used: ${problems.join("; ")}.`,
      );
    }
    const taken = owners.get(section.key);
    if (taken !== undefined) {
      throw new ClawdisError(
        "PLUGIN_INVALID",
        `Plugins "${taken}" and "${owner}" both declare the config section "${section.key}"; remove one of them from plugins.load.`,
      );
    }
    owners.set(section.key, owner);
    shape[section.key] = sectionSchema(section) as z.ZodType;
  }
  for (const key of unchecked) shape[key] ??= z.unknown();
  return configSchema.extend(shape) as unknown as ComposedConfigSchema;
}
