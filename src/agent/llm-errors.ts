/**
 * One actionable line for every way a model call can fail. Pure: `classifyError` sorts the SDK's error into an
 * `LlmFailure`, `describeLlmFailure` turns that into words that say what to check.
 */

export type LlmFailure =
  /** The endpoint answered with an HTTP error status (or an error event inside the stream: status undefined). */
  | { kind: "status"; status: number | undefined; message: string; code?: string | undefined }
  /** No HTTP answer at all: refused, DNS, reset, TLS. `code` is the system error code when there is one. */
  | { kind: "connection"; code?: string | undefined; message: string }
  /** Anything else (a stream that broke off, a parse error). */
  | { kind: "other"; message: string };

export interface FailureContext {
  baseUrl: string;
  model?: string;
  /** Output had already arrived when the failure happened. */
  midStream?: boolean;
}

const MAX_DETAIL = 300;

/** Collapses whitespace and shortens a server's message (which may be a whole HTML page). */
export function oneLine(text: string, max = MAX_DETAIL): string {
  const flat = text.replace(/\s+/g, " ").trim();
  return flat.length > max ? `${flat.slice(0, max - 1)}…` : flat;
}

export function describeLlmFailure(failure: LlmFailure, context: FailureContext): string {
  const endpoint = `model endpoint ${context.baseUrl}`;
  if (failure.kind === "connection") {
    switch (failure.code) {
      case "ECONNREFUSED":
        return `${endpoint} refused the connection: is the server running?`;
      case "ENOTFOUND":
      case "EAI_AGAIN":
        return `${endpoint}: host not found; check inbound.reply.agent.baseUrl or OPENAI_BASE_URL`;
      default: {
        const detail = oneLine(failure.code ? `${failure.code}: ${failure.message}` : failure.message);
        if (context.midStream)
          return `the model's answer was cut off: the connection to ${endpoint} was lost (${detail})`;
        return `could not reach ${endpoint} (${detail}): is the server up and the URL right?`;
      }
    }
  }
  if (failure.kind === "other") {
    const detail = oneLine(failure.message);
    return context.midStream ? `the model's answer was cut off: ${detail}` : `${endpoint} failed: ${detail}`;
  }
  const detail = oneLine(failure.message);
  const status = failure.status;
  if (status === undefined) return `${endpoint} reported an error: ${detail}`;
  if (status === 401 || status === 403) {
    return `${endpoint} said ${status}: check inbound.reply.agent.apiKey or OPENAI_API_KEY (${detail})`;
  }
  if (isModelNotFound(failure)) {
    const model = context.model ? `model '${context.model}'` : "the model";
    return `${model} not found at ${context.baseUrl}: check inbound.reply.agent.model (the server said: ${detail})`;
  }
  if (status === 404) {
    return `${endpoint} said 404 (${detail}): check inbound.reply.agent.baseUrl; OpenAI-compatible servers usually answer under /v1`;
  }
  if (status === 429) return `${endpoint} said 429, rate limited or out of quota: ${detail}`;
  if (status >= 500) return `${endpoint} failed with ${status}: ${detail}`;
  return `${endpoint} rejected the request (${status}): ${detail}`;
}

/** OpenAI and vLLM say "The model 'x' does not exist", Ollama says 'model "x" not found'. */
function isModelNotFound(failure: Extract<LlmFailure, { kind: "status" }>): boolean {
  if (failure.code === "model_not_found") return true;
  return failure.status === 404 && /\bmodel\b/i.test(failure.message);
}

/** The first system error code (`ECONNREFUSED`, …) along an error's `cause` chain. */
export function systemErrorCode(error: unknown): string | undefined {
  let current: unknown = error;
  for (let depth = 0; depth < 6 && current && typeof current === "object"; depth++) {
    const code = (current as { code?: unknown }).code;
    if (typeof code === "string" && /^[A-Z][A-Z0-9_]+$/.test(code)) return code;
    current = (current as { cause?: unknown }).cause;
  }
  return undefined;
}

/** The innermost useful message along a `cause` chain ("fetch failed" says nothing by itself). */
export function innermostMessage(error: unknown): string {
  let message = error instanceof Error ? error.message : String(error);
  let current: unknown = error;
  for (let depth = 0; depth < 6 && current instanceof Error; depth++) {
    if (current.message) message = current.message;
    current = current.cause;
  }
  return message;
}

/** An error of the SDK's `APIError` class, as far as `classifyError` reads it. */
type SdkApiError = Error & { status?: number; code?: string | null; error?: unknown; headers?: unknown };

/** The SDK's error classes (the `openai` module's own; only the llm client imports it). */
export interface SdkErrors {
  APIConnectionError: abstract new (...args: never[]) => Error;
  APIError: abstract new (...args: never[]) => SdkApiError;
}

/** Sorts the SDK's errors into the kinds `describeLlmFailure` words (`sdk` undefined: it failed to load). */
export function classifyError(error: unknown, sdk: SdkErrors | undefined): LlmFailure {
  if (sdk && error instanceof sdk.APIConnectionError) {
    return { kind: "connection", code: systemErrorCode(error.cause), message: innermostMessage(error) };
  }
  if (sdk && error instanceof sdk.APIError) {
    return {
      kind: "status",
      status: error.status,
      message: serverMessage(error),
      code: error.code ?? undefined,
    };
  }
  const code = systemErrorCode(error);
  if (code) return { kind: "connection", code, message: innermostMessage(error) };
  return { kind: "other", message: innermostMessage(error) };
}

/** The server's own words: `{error: {message}}`, `{error: "…"}`, or the raw body text. */
function serverMessage(error: SdkApiError): string {
  const body: unknown = error.error;
  if (typeof body === "string") return body;
  if (body && typeof body === "object" && typeof (body as { message?: unknown }).message === "string") {
    return (body as { message: string }).message;
  }
  const prefix = error.status ? `${error.status} ` : "";
  return error.message.startsWith(prefix) ? error.message.slice(prefix.length) : error.message;
}
