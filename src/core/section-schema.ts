import type { z } from "zod";
import type { PluginConfigSection } from "../plugin-api/types.js";
import { ClawdisError, describeError } from "./errors.js";

/**
 * A config section's schema, which a section may give as a function that loads it (plugin-api/types.ts
 * `PluginConfigSection.schema`): loaded once per section object and kept with it. Imports no zod itself, so the
 * gateway's start, which takes its config from the config cache, loads none.
 */
const loaded = new WeakMap<object, z.ZodType>();

/** A section and the plugin that owns it (config-sections.ts `ConfigSectionEntry`). */
interface SectionOwner {
  owner: string;
  section: PluginConfigSection<unknown>;
}

/** The section's schema when it is at hand: given as a schema, or loaded already; else undefined. */
export function sectionSchema<C>(section: PluginConfigSection<C>): z.ZodType<C> | undefined {
  const { schema } = section;
  return typeof schema === "function" ? (loaded.get(section) as z.ZodType<C> | undefined) : schema;
}

/** Loads the section's schema (once per section object) and resolves with it; a loader's failure rejects. */
export async function loadSectionSchema<C>(section: PluginConfigSection<C>): Promise<z.ZodType<C>> {
  const known = sectionSchema(section);
  if (known) return known;
  const schema = await (section.schema as () => Promise<z.ZodType<C>>)();
  loaded.set(section, schema);
  return schema;
}

/**
 * `entries` with every section's schema loaded: what validation takes (it composes the root schema
 * synchronously). Throws ClawdisError PLUGIN_INVALID naming the plugin whose schema cannot be loaded.
 */
export async function withSchemas<T extends readonly SectionOwner[]>(entries: T): Promise<T> {
  await Promise.all(
    entries.map(({ owner, section }) =>
      loadSectionSchema(section).catch((error: unknown) => {
        throw new ClawdisError(
          "PLUGIN_INVALID",
          `Plugin "${owner}": the schema of its config section "${section.key}" could not be loaded: ${describeError(error)}.`,
        );
      }),
    ),
  );
  return entries;
}
