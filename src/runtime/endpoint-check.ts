import type { Endpoint } from "../agent/endpoint.js";
import { createHttpFetch } from "../agent/http-fetch.js";

/** How long `clawdis doctor` waits for the endpoint's model list when no gateway runs to ask instead. */
export const ENDPOINT_CHECK_MS = 3000;

export type EndpointCheck = { ok: true; models: string[] } | { ok: false; error: string };

/**
 * One `GET <baseUrl>/models` with the endpoint's key, no retry, given up after `timeoutMs`. A plain request over
 * `node:http`/`node:https` (`createHttpFetch`), not the model client: the read-only commands never load the SDK
 * (test/architecture.test.ts); and not the built-in fetch, whose first request to a live server compiles undici's
 * HTTP parser on a background thread (~150 ms of CPU, docs/benchmarks.md). Never throws: a failure is
 * `{ ok: false }` with one line saying what happened (refused, no answer in time, an HTTP status).
 */
export async function checkEndpoint(
  endpoint: Endpoint,
  timeoutMs = ENDPOINT_CHECK_MS,
): Promise<EndpointCheck> {
  const url = `${endpoint.baseUrl}/models`;
  let response: Response;
  try {
    response = await createHttpFetch()(url, {
      headers: { authorization: `Bearer ${endpoint.apiKey}` },
      signal: AbortSignal.timeout(timeoutMs),
    });
  } catch (error) {
    return { ok: false, error: fetchFailure(error, timeoutMs) };
  }
  const text = await response.text().catch(() => "");
  if (!response.ok) {
    const key =
      response.status === 401 || response.status === 403
        ? ": check the API key (inbound.reply.agent.apiKey or OPENAI_API_KEY)"
        : "";
    return { ok: false, error: `GET ${url} answered HTTP ${response.status}${key}` };
  }
  try {
    const body = JSON.parse(text) as { data?: unknown };
    const data = Array.isArray(body.data) ? body.data : [];
    const models = data
      .map((m) => (m !== null && typeof m === "object" ? (m as { id?: unknown }).id : undefined))
      .filter((id): id is string => typeof id === "string");
    return { ok: true, models };
  } catch {
    return {
      ok: false,
      error: `GET ${url} answered something that is not JSON: is this an OpenAI-compatible endpoint?`,
    };
  }
}

/**
 * One line for a request that threw: the timeout, or the system error (itself, or under the built-in fetch's
 * "fetch failed", which the request falls back to for what it does not send itself).
 */
function fetchFailure(error: unknown, timeoutMs: number): string {
  const name = (error as { name?: unknown } | null)?.name;
  if (name === "TimeoutError" || name === "AbortError") return `no answer within ${timeoutMs / 1000}s`;
  const own = error as { code?: unknown; message?: unknown; cause?: unknown } | null;
  const cause = (typeof own?.code === "string" ? own : own?.cause) as
    | { code?: unknown; message?: unknown }
    | undefined;
  if (cause?.code === "ECONNREFUSED") return "the connection was refused: is the server running?";
  if (typeof cause?.message === "string") return `could not connect: ${cause.message}`;
  return `could not connect: ${error instanceof Error ? error.message : String(error)}`;
}
