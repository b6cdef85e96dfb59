import { ClawdisError } from "../core/errors.js";
import { sectionSchema } from "../core/section-schema.js";
import type { PluginDefinition } from "../plugin-api/index.js";

interface SchemaIssue {
  path: readonly PropertyKey[];
  message: string;
}

/** `plugins.entries.<id>.config.allowFrom[0]`: the path a user finds in their clawdis.json. */
export function pluginConfigPath(id: string, path: readonly PropertyKey[]): string {
  let out = `plugins.entries.${id}.config`;
  for (const segment of path) {
    out += typeof segment === "number" ? `[${segment}]` : `.${String(segment)}`;
  }
  return out;
}

function isEmptyObject(value: unknown): boolean {
  return (
    typeof value === "object" && value !== null && !Array.isArray(value) && Object.keys(value).length === 0
  );
}

/**
 * The plugin's settings (its `context.config`).
 * - A plugin with a `configSection`: the section's value in `gatewayConfig` (validated with the whole file when
 *   the config was loaded); a config that lacks the section (one built without it, e.g. in a test) gets the
 *   section's defaults, checked by its schema. `plugins.entries.<id>.config` must then be absent: the settings
 *   live in the section.
 * - Else, validated by its `configSchema` (its parsed output, defaults applied). No entry config: the schema
 *   sees `{}`, so a schema of optional/defaulted keys needs no entry at all. No schema: the plugin takes no
 *   settings; anything but an absent or empty config is an error.
 * Throws ClawdisError CONFIG_INVALID naming `plugins.entries.<id>.config.<path>` (or `<section>.<path>`) for every
 * problem.
 */
export function validatePluginConfig(
  definition: Pick<PluginDefinition, "id" | "configSchema" | "configSection">,
  raw: unknown,
  gatewayConfig?: Readonly<object>,
): unknown {
  const { id, configSchema, configSection } = definition;
  if (configSection) {
    if (raw !== undefined && !isEmptyObject(raw)) {
      throw new ClawdisError(
        "CONFIG_INVALID",
        `${pluginConfigPath(id, [])}: plugin "${id}" takes its settings from the top-level section "${configSection.key}", not from here: move them there.`,
      );
    }
    const sections = (gatewayConfig ?? {}) as Readonly<Record<string, unknown>>;
    if (Object.hasOwn(sections, configSection.key)) return sections[configSection.key];
    // A config without the section (not composed with it): the section's defaults, from its schema.
    const schema = sectionSchema(configSection);
    if (!schema) {
      throw new ClawdisError(
        "CONFIG_INVALID",
        `plugin "${id}": the config has no "${configSection.key}" section and its schema is not loaded (section-schema.ts loadSectionSchema)`,
      );
    }
    return parseWith(schema, undefined, id, (path) => sectionPath(configSection.key, path));
  }
  if (!configSchema) {
    if (raw === undefined || isEmptyObject(raw)) return undefined;
    throw new ClawdisError(
      "CONFIG_INVALID",
      `${pluginConfigPath(id, [])}: plugin "${id}" takes no settings; remove this key.`,
    );
  }
  return parseWith(configSchema, raw === undefined ? {} : raw, id, (path) => pluginConfigPath(id, path));
}

function sectionPath(key: string, path: readonly PropertyKey[]): string {
  let out = key;
  for (const segment of path) out += typeof segment === "number" ? `[${segment}]` : `.${String(segment)}`;
  return out;
}

function parseWith(
  schema: NonNullable<PluginDefinition["configSchema"]>,
  value: unknown,
  id: string,
  where: (path: readonly PropertyKey[]) => string,
): unknown {
  const result = schema.safeParse(value);
  if (result.success) return result.data;
  const issues = (result.error as { issues?: SchemaIssue[] } | undefined)?.issues ?? [];
  const lines =
    issues.length > 0
      ? issues.map((issue) => `${where(issue.path ?? [])}: ${issue.message}`)
      : [`${where([])}: rejected by the plugin's schema`];
  throw new ClawdisError("CONFIG_INVALID", `Invalid settings for plugin "${id}": ${lines.join("; ")}`, {
    cause: result.error,
  });
}
