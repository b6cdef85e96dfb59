import { readFileSync } from "node:fs";
import { dirname, isAbsolute, resolve } from "node:path";
import type { ClawdisConfig } from "./config-schema.js";
import { ClawdisError, describeError } from "./errors.js";
import { defaultStorePath, defaultWorkspaceDir, type Env, expandHome, resolveConfigPath } from "./paths.js";

/**
 * The config file as read, and the loaded config assembled around a validated one: the parts of the loader that
 * need neither the schema (zod) nor JSON5, so that a config found in the cache (config-cache.ts) loads neither.
 */

export interface ValidatedConfig {
  /** The core's keys, and each section under its key (as its schema parsed it). */
  config: ClawdisConfig;
  /** One line per section that asks for a plugin this build does not have ("telegram.botToken is set but …"). */
  warnings: string[];
  /** Top-level keys accepted without a check (see UnclaimedKeys), in file order. */
  unchecked: UncheckedKey[];
}

export interface UncheckedKey {
  key: string;
  /** A known top-level key it is one typo away from, if any (`gatway` -> `gateway`). */
  closest?: string;
}

export interface LoadedConfig extends ValidatedConfig {
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

export interface ConfigFile {
  path: string;
  /** Undefined: there is no file. */
  text: string | undefined;
  /** Said once at start (both clawdis.json and clawdis.json5 exist). */
  notes: string[];
}

/**
 * The config file (see `resolveConfigPath`: `CLAWDIS_CONFIG_PATH`, else `<state>/clawdis.json`, else
 * `<state>/clawdis.json5`). A path set in `CLAWDIS_CONFIG_PATH` that does not exist is a config error (exit 2):
 * the user named a file, running on defaults instead would be silent.
 * @throws ClawdisError CONFIG_INVALID for a missing explicit path, IO when the file exists but cannot be read.
 */
export function readConfigFile(env: Env): ConfigFile {
  const { path, explicit, both } = resolveConfigPath(env);
  // `both` only when `path` is `<state>/clawdis.json`: its neighbour `clawdis.json5` is the one left unread.
  const notes = both
    ? [
        `both clawdis.json and clawdis.json5 are in ${dirname(path)}: ${path} is read, ${path}5 is ignored (move what it holds into clawdis.json, then delete it)`,
      ]
    : [];
  return readConfigFileAt(path, explicit, notes);
}

/** `readConfigFile` for a path already chosen. */
export function readConfigFileAt(path: string, explicit: boolean, notes: string[]): ConfigFile {
  try {
    return { path, text: readFileSync(path, "utf8"), notes };
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") {
      if (explicit) {
        throw new ClawdisError(
          "CONFIG_INVALID",
          `CLAWDIS_CONFIG_PATH names ${path}, which does not exist: create it (clawdis init writes a starter one) or unset CLAWDIS_CONFIG_PATH`,
          { cause: error },
        );
      }
      return { path, text: undefined, notes };
    }
    throw new ClawdisError("IO", `cannot read config ${path}: ${describeError(error)}`, { cause: error });
  }
}

/** A validated config with its file: the paths it names resolved (they depend on `env`, never cached). */
export function assembleLoaded(file: ConfigFile, validated: ValidatedConfig, env: Env): LoadedConfig {
  const { store } = validated.config.inbound.reply.session;
  const { workspace } = validated.config.inbound.reply.agent;
  return {
    ...validated,
    warnings: [...file.notes, ...validated.warnings],
    path: file.path,
    exists: file.text !== undefined,
    storePath: store !== undefined ? resolveConfigRelativePath(store, file.path, env) : defaultStorePath(env),
    workspaceDir:
      workspace !== undefined
        ? resolveConfigRelativePath(workspace, file.path, env)
        : defaultWorkspaceDir(env),
  };
}
