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

/** `CLAWDIS_CONFIG_PATH`, else `<state>/clawdis.json`. */
export function configPath(env: Env = process.env): string {
  const override = env.CLAWDIS_CONFIG_PATH;
  return override && override.length > 0 ? expandHome(override, env) : join(stateDir(env), "clawdis.json");
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
