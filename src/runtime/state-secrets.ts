import { join } from "node:path";
import { type Env, gatewayTokenPath, journalDir, stateDir } from "../core/paths.js";

/**
 * The state directory's secrets, which no tool call reads, writes or sends, the owner's included (docs/agent.md,
 * Tools): the config file (it holds the bot token and API keys, and writing it would change who may do what),
 * the gateway token, the credentials (WhatsApp's link), the journal (every accepted message, other people's too),
 * the plugins' state (offsets, staged downloads) and the bash allowlist (`approvals.json`: the agent never writes
 * its own way past an approval). The session store and transcripts are not on the list: outside the primary
 * session they are out of reach anyway (file tools stay in the session's workspace). Pure.
 */
export function stateSecrets(env: Env, configPath?: string): { path: string; what: string }[] {
  const state = stateDir(env);
  const configs = [join(state, "clawdis.json"), join(state, "clawdis.json5")];
  if (configPath && !configs.includes(configPath)) configs.unshift(configPath);
  return [
    ...configs.map((path) => ({ path, what: "the gateway's config file" })),
    { path: gatewayTokenPath(env), what: "the gateway token" },
    { path: join(state, "credentials"), what: "in the credentials folder" },
    { path: journalDir(env), what: "in the journal" },
    { path: join(state, "plugins"), what: "in the plugins' state folder" },
    { path: join(state, "approvals.json"), what: "the bash allowlist (approvals.json)" },
  ];
}
