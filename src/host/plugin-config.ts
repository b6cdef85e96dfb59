import { ClawdisError } from "../core/errors.js";
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
 * The plugin's settings, validated by its `configSchema` (its parsed output, defaults applied).
 * - No entry config: the schema sees `{}`, so a schema of optional/defaulted keys needs no entry at all.
 * - No schema: the plugin takes no settings; anything but an absent or empty config is an error.
 * Throws ClawdisError CONFIG_INVALID naming `plugins.entries.<id>.config.<path>` for every problem.
 */
export function validatePluginConfig(definition: PluginDefinition, raw: unknown): unknown {
  const { id, configSchema } = definition;
  if (!configSchema) {
    if (raw === undefined || isEmptyObject(raw)) return undefined;
    throw new ClawdisError(
      "CONFIG_INVALID",
      `${pluginConfigPath(id, [])}: plugin "${id}" takes no settings; remove this key.`,
    );
  }
  const result = configSchema.safeParse(raw === undefined ? {} : raw);
  if (result.success) return result.data;
  const issues = (result.error as { issues?: SchemaIssue[] } | undefined)?.issues ?? [];
  const lines =
    issues.length > 0
      ? issues.map((issue) => `${pluginConfigPath(id, issue.path ?? [])}: ${issue.message}`)
      : [`${pluginConfigPath(id, [])}: rejected by the plugin's configSchema`];
  throw new ClawdisError("CONFIG_INVALID", `Invalid settings for plugin "${id}": ${lines.join("; ")}`, {
    cause: result.error,
  });
}
