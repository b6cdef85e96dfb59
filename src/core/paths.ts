import { existsSync } from "node:fs";
import { homedir } from "node:os";
import { join, resolve } from "node:path";

/** Environment variables as read by clawdis; tests pass their own object instead of process.env. */
export type Env = Readonly<Record<string, string | undefined>>;

/** `~` or `~/x` expanded against the user's home directory; other paths resolved to absolute. */
export function expandHome(path: string, env: Env = process.env): string {
  const home = env.HOME && env.HOME.length > 0 ? env.HOME : homedir();
  if (path === "~") return home;
  if (path.startsWith("~/")) return join(home, path.slice(2));
  return resolve(path);
}

/** `CLAWDIS_STATE_DIR`, else `~/.clawdis`. */
export function stateDir(env: Env = process.env): string {
  const override = env.CLAWDIS_STATE_DIR;
  return override && override.length > 0 ? expandHome(override, env) : expandHome("~/.clawdis", env);
}

/** `CLAWDIS_CONFIG_PATH`, else `<state>/clawdis.json` (where a new config is written). */
export function configPath(env: Env = process.env): string {
  const override = env.CLAWDIS_CONFIG_PATH;
  return override && override.length > 0 ? expandHome(override, env) : join(stateDir(env), "clawdis.json");
}

/**
 * The config file to read: `CLAWDIS_CONFIG_PATH` when set (`explicit`: a missing one is an error), else
 * `<state>/clawdis.json`, else `<state>/clawdis.json5` when only that one exists. `both`: the two exist (the
 * `.json` one is read).
 */
export function resolveConfigPath(env: Env = process.env): {
  path: string;
  explicit: boolean;
  both: boolean;
} {
  const override = env.CLAWDIS_CONFIG_PATH;
  if (override && override.length > 0)
    return { path: expandHome(override, env), explicit: true, both: false };
  const json = join(stateDir(env), "clawdis.json");
  const json5 = join(stateDir(env), "clawdis.json5");
  const hasJson = existsSync(json);
  const hasJson5 = existsSync(json5);
  return { path: !hasJson && hasJson5 ? json5 : json, explicit: false, both: hasJson && hasJson5 };
}

/** The session store when `inbound.reply.session.store` is not set: `<state>/sessions/sessions.json`. */
export function defaultStorePath(env: Env = process.env): string {
  return join(stateDir(env), "sessions", "sessions.json");
}

/** Where clawdis kept its store before 0.1: `<state>/sessions.json`, moved on first start. */
export function legacyStorePath(env: Env = process.env): string {
  return join(stateDir(env), "sessions.json");
}

/** The bearer token for the local HTTP server, created 0600 on first start. */
export function gatewayTokenPath(env: Env = process.env): string {
  return join(stateDir(env), "gateway.token");
}

/** Durable inbound journal (accepted messages and how each ended). */
export function journalDir(env: Env = process.env): string {
  return join(stateDir(env), "journal");
}

/** Default working directory of the agent's tools. */
export function defaultWorkspaceDir(env: Env = process.env): string {
  return join(stateDir(env), "workspace");
}
