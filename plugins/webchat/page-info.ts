import { homedir } from "node:os";
import { join, resolve } from "node:path";
import type { HttpHandler, PluginContext } from "../../src/plugin-api/index.js";

/** `GET /webchat/info` (token required): what the page needs beyond `/api/status`. */
export interface PageInfo {
  /** The model's context window, `inbound.reply.agent.contextTokens`: the gauge's full scale. */
  contextWindow: number;
  /** The config file the setup hint tells the person to edit. */
  configPath: string;
}

/**
 * The config file, found as the gateway finds it: `CLAWDIS_CONFIG_PATH` (`~` expanded), else
 * `<state>/clawdis.json`. Re-implemented here because plugins import only src/plugin-api; `/api/status`
 * carrying the path it read would make this unnecessary.
 */
export function configPathFor(env: NodeJS.ProcessEnv, stateDir: string): string {
  const override = env.CLAWDIS_CONFIG_PATH;
  if (!override) return join(stateDir, "clawdis.json");
  const home = env.HOME ? env.HOME : homedir();
  if (override === "~") return home;
  return override.startsWith("~/") ? join(home, override.slice(2)) : resolve(override);
}

export function pageInfo(
  context: Pick<PluginContext, "gatewayConfig" | "stateDir">,
  env: NodeJS.ProcessEnv,
): PageInfo {
  return {
    contextWindow: context.gatewayConfig.inbound.reply.agent.contextTokens,
    configPath: configPathFor(env, context.stateDir),
  };
}

export function pageInfoHandler(info: PageInfo): HttpHandler {
  return (_req, res) => {
    res.writeHead(200, { "content-type": "application/json; charset=utf-8", "cache-control": "no-store" });
    res.end(`${JSON.stringify(info)}\n`);
  };
}
