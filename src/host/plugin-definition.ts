import { ClawdisError } from "../core/errors.js";
import {
  PLUGIN_API_VERSION,
  type PluginDefinition,
  type PluginInstance,
  SUPPORTED_PLUGIN_API_VERSIONS,
} from "../plugin-api/index.js";

/** Plugin ids: also channel names, config keys and URL segments, hence this narrow alphabet. */
export const PLUGIN_ID_PATTERN = /^[a-z0-9-]{1,64}$/;

const EXAMPLE = `export default definePlugin({ apiVersion: ${PLUGIN_API_VERSION}, id: "my-plugin", create(context) { return {}; } })`;

function describeValue(value: unknown): string {
  if (value === null) return "null";
  if (Array.isArray(value)) return "an array";
  return typeof value === "object" ? "an object" : `${typeof value} ${JSON.stringify(value) ?? ""}`.trim();
}

/**
 * Checks that `value` looks like a plugin definition for this gateway and returns it typed.
 * `origin` names the plugin in messages (e.g. `Plugin "./my-plugin" (/abs/index.js)`).
 * Throws ClawdisError PLUGIN_INVALID listing every problem, or the API version mismatch.
 */
export function validatePluginDefinition(value: unknown, origin: string): PluginDefinition {
  if (value === null || typeof value !== "object" || Array.isArray(value)) {
    throw new ClawdisError(
      "PLUGIN_INVALID",
      `${origin} does not export a plugin definition (its default export is ${describeValue(value)}). Write: ${EXAMPLE}`,
    );
  }
  const candidate = value as Record<string, unknown>;
  const problems: string[] = [];
  if (typeof candidate.apiVersion !== "number") {
    problems.push(`apiVersion is missing (a number; this gateway speaks ${PLUGIN_API_VERSION})`);
  }
  if (candidate.id === undefined) {
    problems.push("id is missing (1-64 lowercase letters, digits and dashes)");
  } else if (typeof candidate.id !== "string" || !PLUGIN_ID_PATTERN.test(candidate.id)) {
    problems.push(`id ${JSON.stringify(candidate.id)} is not 1-64 lowercase letters, digits and dashes`);
  }
  if (typeof candidate.create !== "function") {
    problems.push("create is missing (a function (context) => instance)");
  }
  if (candidate.version !== undefined && typeof candidate.version !== "string") {
    problems.push("version must be a string");
  }
  if (candidate.sendThread !== undefined && typeof candidate.sendThread !== "boolean") {
    problems.push("sendThread must be true or false");
  }
  const schema = candidate.configSchema as { safeParse?: unknown } | undefined;
  if (schema !== undefined && (schema === null || typeof schema.safeParse !== "function")) {
    problems.push("configSchema must be a zod schema (something with safeParse)");
  }
  if (problems.length > 0) {
    throw new ClawdisError("PLUGIN_INVALID", `${origin} is not a valid plugin: ${problems.join("; ")}.`);
  }
  if (!SUPPORTED_PLUGIN_API_VERSIONS.includes(candidate.apiVersion as number)) {
    const wanted = candidate.apiVersion as number;
    const fix =
      wanted > PLUGIN_API_VERSION
        ? `update clawdis, or install a version of the plugin written for API ${PLUGIN_API_VERSION}`
        : `install a version of the plugin written for API ${PLUGIN_API_VERSION}`;
    throw new ClawdisError(
      "PLUGIN_INVALID",
      `${origin} (id "${candidate.id as string}") was written for plugin API version ${wanted}, but this gateway speaks versions ${SUPPORTED_PLUGIN_API_VERSIONS.join(" and ")}: ${fix}.`,
    );
  }
  return value as PluginDefinition;
}

/**
 * Checks what `create` returned. A malformed instance is a bug in the plugin, so the error is PLUGIN_INVALID
 * (fatal: restarting would produce the same object).
 */
export function validatePluginInstance(value: unknown, id: string): PluginInstance {
  const origin = `Plugin "${id}": create() returned`;
  if (value === null || typeof value !== "object" || Array.isArray(value)) {
    throw new ClawdisError(
      "PLUGIN_INVALID",
      `${origin} ${describeValue(value)}; it must return an object ({ start?, stop?, transport?, tools? }).`,
    );
  }
  const instance = value as Record<string, unknown>;
  const problems: string[] = [];
  for (const key of ["start", "stop"] as const) {
    if (instance[key] !== undefined && typeof instance[key] !== "function")
      problems.push(`${key} must be a function`);
  }
  const transport = instance.transport as Record<string, unknown> | undefined;
  if (transport !== undefined) {
    if (transport === null || typeof transport !== "object") {
      problems.push("transport must be an object");
    } else {
      const maxTextLength = (transport.capabilities as { maxTextLength?: unknown } | undefined)
        ?.maxTextLength;
      if (typeof maxTextLength !== "number" || !Number.isInteger(maxTextLength) || maxTextLength < 1) {
        problems.push("transport.capabilities.maxTextLength must be a positive integer");
      }
      if (typeof transport.authorize !== "function") problems.push("transport.authorize must be a function");
      if (typeof transport.send !== "function") problems.push("transport.send must be a function");
      if (transport.health !== undefined && typeof transport.health !== "function") {
        problems.push("transport.health must be a function");
      }
    }
  }
  if (instance.tools !== undefined) {
    if (!Array.isArray(instance.tools)) {
      problems.push("tools must be an array");
    } else {
      instance.tools.forEach((tool: { name?: unknown; execute?: unknown } | null, index) => {
        if (typeof tool?.name !== "string" || typeof tool.execute !== "function") {
          problems.push(`tools[${index}] needs a name (string) and execute (function)`);
        }
      });
    }
  }
  if (problems.length > 0) {
    throw new ClawdisError("PLUGIN_INVALID", `${origin} an invalid instance: ${problems.join("; ")}.`);
  }
  return value as PluginInstance;
}
