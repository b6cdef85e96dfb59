import { readFileSync } from "node:fs";
import { dirname, isAbsolute, resolve } from "node:path";
import JSON5 from "json5";
import { formatConfigIssues, formatJson5SyntaxError } from "./config-errors.js";
import { type ClawdisConfig, configSchema, defaultConfig } from "./config-schema.js";
import { ClawdisError, describeError } from "./errors.js";
import { isBlankJson5, locateJson5 } from "./json5-locate.js";
import { configPath, defaultStorePath, defaultWorkspaceDir, type Env, expandHome } from "./paths.js";

/**
 * The configuration loader: `clawdis.json` (JSON5) -> a validated, fully defaulted `ClawdisConfig`.
 *
 * Contract:
 * - Read once at start; a restart applies changes.
 * - A missing file is not an error: every default, `exists: false`. A file with only comments/whitespace is `{}`.
 * - A file that does not parse or does not validate throws ClawdisError CONFIG_SYNTAX / CONFIG_INVALID
 *   (exit code 2) naming the key path, what was expected, what was found and the line. It is never replaced
 *   by defaults, in whole or in part.
 * - A key written twice in one object is CONFIG_INVALID too (JSON5 would keep the last value without a word).
 */

export type { AgentConfig, ClawdisConfig, SessionConfig } from "./config-schema.js";
export { configSchema, defaultConfig } from "./config-schema.js";

export interface LoadedConfig {
  config: ClawdisConfig;
  /** Absolute path of the config file (whether or not it exists). */
  path: string;
  exists: boolean;
  /** `inbound.reply.session.store` resolved, else `<state>/sessions/sessions.json`. */
  storePath: string;
  /** `inbound.reply.agent.workspace` resolved, else `<state>/workspace`. */
  workspaceDir: string;
}

/**
 * A path written in the config: `~` and `~/x` are the home directory, absolute paths stay, anything else is
 * relative to the folder of the config file (not to the working directory the gateway was started from).
 */
export function resolveConfigRelativePath(value: string, configFile: string, env: Env = process.env): string {
  if (value === "~" || value.startsWith("~/")) return expandHome(value, env);
  if (isAbsolute(value)) return resolve(value);
  return resolve(dirname(configFile), value);
}

/**
 * Parses and validates config text. `fileLabel` names the file in messages: the whole label heads the
 * message, its base name appears in each line ("(clawdis.json line 7)").
 * @throws ClawdisError CONFIG_SYNTAX (not JSON5) or CONFIG_INVALID (does not match the schema, or a duplicate key).
 */
export function parseConfigText(text: string, fileLabel: string): ClawdisConfig {
  let raw: unknown;
  try {
    raw = JSON5.parse(text);
  } catch (error) {
    if (isBlankJson5(text)) {
      raw = {};
    } else {
      throw new ClawdisError("CONFIG_SYNTAX", formatJson5SyntaxError(error, text, fileLabel), {
        cause: error,
      });
    }
  }
  const result = configSchema.safeParse(raw);
  const hasDuplicates = locateJson5(text).duplicates().length > 0;
  if (result.success && !hasDuplicates) return result.data;
  const issues = result.success ? [] : result.error.issues;
  const lines = formatConfigIssues(issues, raw, text, fileLabel, configSchema);
  const message = [`invalid config ${fileLabel}:`, ...lines.map((line) => `  ${line}`)].join("\n");
  throw new ClawdisError("CONFIG_INVALID", message, result.success ? {} : { cause: result.error });
}

/**
 * Loads the config at `configPath(env)` (env `CLAWDIS_CONFIG_PATH`, else `<state>/clawdis.json`).
 * @throws ClawdisError CONFIG_SYNTAX / CONFIG_INVALID (exit 2), or IO when the file exists but cannot be read.
 */
export function loadConfig(env: Env = process.env): LoadedConfig {
  const path = configPath(env);
  let text: string | undefined;
  try {
    text = readFileSync(path, "utf8");
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== "ENOENT") {
      throw new ClawdisError("IO", `cannot read config ${path}: ${describeError(error)}`, { cause: error });
    }
  }
  const exists = text !== undefined;
  const config = text === undefined ? defaultConfig() : parseConfigText(text, path);
  const { store } = config.inbound.reply.session;
  const { workspace } = config.inbound.reply.agent;
  return {
    config,
    path,
    exists,
    storePath: store !== undefined ? resolveConfigRelativePath(store, path, env) : defaultStorePath(env),
    workspaceDir:
      workspace !== undefined ? resolveConfigRelativePath(workspace, path, env) : defaultWorkspaceDir(env),
  };
}
