import { describeError } from "../core/errors.js";
import type { PluginDefinition } from "../plugin-api/index.js";
import { validatePluginConfig } from "./plugin-config.js";

/** One plugin's settings under a config, and whether that config asks for it to run. */
export interface PluginSettings {
  /** Its `context.config` (undefined when switched off in `plugins.entries` or when `error` is set). */
  config: unknown;
  /** Enabled in `plugins.entries` and asked for by its section (e.g. a bot token is set). */
  on: boolean;
  /** Why it is off, for `/status`. */
  detail?: string;
  /** What is wrong with its settings (CONFIG_INVALID's message); the config must then be refused. */
  error?: string;
}

/**
 * The settings of `definition` under a config (`plugins.entries.<id>` and the whole validated config): validated
 * by its schema; a plugin switched off in `plugins.entries`, or whose section does not ask for it, is off. The same
 * decision at start and for a config change while the gateway runs.
 */
export function settingsFor(
  definition: PluginDefinition,
  entry: { enabled: boolean; config?: unknown } | undefined,
  gatewayConfig: Readonly<object> | undefined,
): PluginSettings {
  const enabled = entry?.enabled !== false;
  let config: unknown;
  let error: string | undefined;
  if (enabled) {
    try {
      config = validatePluginConfig(definition, entry?.config, gatewayConfig);
    } catch (problem) {
      error = describeError(problem);
    }
  }
  // A plugin whose config section does not ask for it (no bot token, `enabled: false`) is not created at all.
  const section = definition.configSection;
  const asked = !enabled || !section?.enabled || config === undefined || section.enabled(config);
  const on = enabled && asked;
  const settings: PluginSettings = { config, on };
  if (!on) {
    settings.detail = enabled
      ? `not configured (see the "${section?.key}" section)`
      : "disabled in plugins.entries";
  }
  if (error !== undefined) settings.error = error;
  return settings;
}

/** What is wrong with a definition's `reload` (lists of key paths), or undefined. */
export function reloadPolicyProblem(definition: PluginDefinition): string | undefined {
  const reload = definition.reload as unknown;
  if (reload === undefined) return undefined;
  const isPaths = (value: unknown) =>
    value === undefined ||
    (Array.isArray(value) && value.every((path) => typeof path === "string" && path !== ""));
  const policy = reload as { live?: unknown; restartOn?: unknown } | null;
  if (policy === null || typeof policy !== "object" || !isPaths(policy.live) || !isPaths(policy.restartOn)) {
    return `Plugin "${definition.id}" is not a valid plugin: reload must be { live?: string[], restartOn?: string[] } (key paths such as "allowFrom").`;
  }
  return undefined;
}
