import { createHash, timingSafeEqual } from "node:crypto";
import type { PluginContext } from "../../src/plugin-api/index.js";
import type { WebhooksConfig } from "./config.js";

type GatewayConfig = PluginContext["gatewayConfig"];

export interface ResolvedHook {
  name: string;
  /** The session the hook's input goes to. */
  sessionKey: string;
  /** The bearer token the hook's caller must send. */
  token: string;
  /** The tools the agent may use on this hook's input (`webhooks.<name>.tools`; default none). */
  tools: string[];
}

/**
 * The hook called `name` in `hooks` (the plugin's section, `webhooks`), with its defaults filled in: the session
 * is `webhooks.<name>.session`, else the primary session (`mainKey`), or `global` under `scope: "global"` (where
 * everything shares one session); the token is `webhooks.<name>.token`, else the gateway token. Undefined for a
 * name not configured (own keys only: `constructor` is not a hook).
 */
export function resolveHook(
  hooks: WebhooksConfig,
  config: GatewayConfig,
  gatewayToken: string,
  name: string,
): ResolvedHook | undefined {
  if (!Object.hasOwn(hooks, name)) return undefined;
  const hook = hooks[name];
  if (!hook) return undefined;
  const session = config.inbound.reply.session;
  return {
    name,
    sessionKey: hook.session ?? (session.scope === "global" ? "global" : session.mainKey),
    token: hook.token ?? gatewayToken,
    tools: hook.tools ?? [],
  };
}

/** The token of `Authorization: Bearer <token>`; the query string is not accepted (it ends up in logs). */
export function bearerToken(authorization: string | string[] | undefined): string | undefined {
  const value = Array.isArray(authorization) ? authorization[0] : authorization;
  const match = value === undefined ? null : /^Bearer\s+(\S+)\s*$/i.exec(value);
  return match?.[1];
}

/** Constant-time comparison that leaks neither the content nor the length of the expected token. */
export function tokensEqual(expected: string, given: string | undefined): boolean {
  if (given === undefined) return false;
  const digest = (text: string) => createHash("sha256").update(text).digest();
  return timingSafeEqual(digest(expected), digest(given)) && expected.length > 0;
}
