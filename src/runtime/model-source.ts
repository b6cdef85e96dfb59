import type { AgentConfig } from "../core/config-schema.js";
import type { Env } from "../core/paths.js";

/** Where the model name and the endpoint came from, as `/status` says it. */
export type ModelSource = "config" | "env OPENAI_MODEL" | "the endpoint's only model";
export type EndpointSource = "config" | "env OPENAI_BASE_URL" | "default";

const present = (value: string | undefined) =>
  value !== undefined && value.trim() !== "" ? value.trim() : undefined;

/**
 * The model as configured: `inbound.reply.agent.model`, else env `OPENAI_MODEL`; undefined leaves it to the
 * endpoint (its only model, when `GET /models` lists exactly one). Pure.
 */
export function configuredModel(
  agent: AgentConfig,
  env: Env,
): { name: string; source: ModelSource } | undefined {
  if (agent.model) return { name: agent.model, source: "config" };
  const fromEnv = present(env.OPENAI_MODEL);
  return fromEnv ? { name: fromEnv, source: "env OPENAI_MODEL" } : undefined;
}

/** Where the endpoint came from (the URL itself is `resolveEndpoint`'s). Pure. */
export function endpointSource(agent: AgentConfig, env: Env): EndpointSource {
  if (agent.baseUrl) return "config";
  return present(env.OPENAI_BASE_URL) ? "env OPENAI_BASE_URL" : "default";
}

/**
 * What a command can say about the model without asking the endpoint: named (config or env), to be found at the
 * endpoint (its only model, when the gateway starts), or missing. Pure.
 */
export function modelSetup(
  agent: AgentConfig,
  env: Env,
): { state: "named"; name: string; source: ModelSource } | { state: "discover" } | { state: "missing" } {
  const named = configuredModel(agent, env);
  if (named) return { state: "named", ...named };
  return shouldDiscoverModel(agent, env) ? { state: "discover" } : { state: "missing" };
}

/**
 * Whether to ask the endpoint for its only model: no model is named, and an endpoint was chosen on purpose (in
 * the config or the environment: the default OpenAI endpoint lists dozens). Pure.
 */
export function shouldDiscoverModel(agent: AgentConfig, env: Env): boolean {
  return configuredModel(agent, env) === undefined && endpointSource(agent, env) !== "default";
}
