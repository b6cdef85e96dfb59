import type { AgentConfig } from "../core/config-schema.js";
import type { Env } from "../core/paths.js";

/**
 * Which OpenAI-compatible endpoint the agent talks to. Pure, and free of the model client (llm-client.ts
 * re-exports it): the read-only commands (`clawdis doctor`) resolve it without loading the SDK.
 */

export const DEFAULT_BASE_URL = "https://api.openai.com/v1";
/** Sent when no key is configured: local servers ignore it, and the SDK refuses to start without one. */
export const NO_API_KEY = "not-needed";

export interface Endpoint {
  baseUrl: string;
  apiKey: string;
  model?: string;
}

/** Config first, then env `OPENAI_BASE_URL` / `OPENAI_API_KEY`; empty values count as absent. */
export function resolveEndpoint(agent: AgentConfig, env: Env): Endpoint {
  const baseUrl = trimSlashes(agent.baseUrl ?? present(env.OPENAI_BASE_URL) ?? DEFAULT_BASE_URL);
  const apiKey = agent.apiKey ?? present(env.OPENAI_API_KEY) ?? NO_API_KEY;
  return agent.model ? { baseUrl, apiKey, model: agent.model } : { baseUrl, apiKey };
}

function present(value: string | undefined): string | undefined {
  return value && value.trim().length > 0 ? value.trim() : undefined;
}

/** `url` without trailing slashes. */
export function trimSlashes(url: string): string {
  return url.replace(/\/+$/, "");
}

/** OpenAI's own API rejects `max_tokens` for its newer models; the other servers all know `max_tokens`. */
export function outputLimitField(baseUrl: string): "max_tokens" | "max_completion_tokens" {
  try {
    return new URL(baseUrl).hostname === "api.openai.com" ? "max_completion_tokens" : "max_tokens";
  } catch {
    return "max_tokens";
  }
}
