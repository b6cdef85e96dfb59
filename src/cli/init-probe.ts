/** How long `clawdis init` waits for the endpoint's model list: a local server answers at once or not at all. */
export const PROBE_TIMEOUT_MS = 3000;

/** What `GET <baseUrl>/models` said. */
export type ModelsProbe =
  | { kind: "models"; models: string[] }
  /** 401 or 403: the endpoint wants a (different) API key. */
  | { kind: "unauthorized"; status: number }
  /** Not reachable, too slow, another status, or not a model list: `why` is one line for people. */
  | { kind: "failed"; why: string };

/**
 * Asks `GET <baseUrl>/models` (the OpenAI list: `{ data: [{ id }] }`) with the key as a bearer token when there is
 * one, for at most `timeoutMs`. Never throws: every failure is a `failed` value saying why.
 */
export async function probeModels(
  baseUrl: string,
  apiKey: string | undefined,
  timeoutMs = PROBE_TIMEOUT_MS,
): Promise<ModelsProbe> {
  let res: Response;
  try {
    res = await fetch(`${baseUrl}/models`, {
      headers: apiKey ? { authorization: `Bearer ${apiKey}` } : {},
      signal: AbortSignal.timeout(timeoutMs),
    });
  } catch (error) {
    const name = error instanceof Error ? error.name : "";
    if (name === "TimeoutError" || name === "AbortError") {
      return { kind: "failed", why: `no answer within ${timeoutMs / 1000} s` };
    }
    const cause =
      error instanceof Error && error.cause instanceof Error ? error.cause.message : String(error);
    return { kind: "failed", why: `not reachable (${cause})` };
  }
  if (res.status === 401 || res.status === 403) {
    await res.body?.cancel();
    return { kind: "unauthorized", status: res.status };
  }
  if (!res.ok) {
    await res.body?.cancel();
    return { kind: "failed", why: `it answered HTTP ${res.status}` };
  }
  const body: unknown = await res.json().catch(() => undefined);
  const data = typeof body === "object" && body !== null ? (body as { data?: unknown }).data : undefined;
  if (!Array.isArray(data)) return { kind: "failed", why: "its answer is not an OpenAI model list" };
  const models = data
    .map((m) => (typeof m === "object" && m !== null ? (m as { id?: unknown }).id : undefined))
    .filter((id): id is string => typeof id === "string" && id.length > 0);
  return { kind: "models", models };
}
