import { setTimeout as delay } from "node:timers/promises";
import type OpenAI from "openai";
import type { ChatCompletionTool } from "openai/resources/chat/completions";
import type { ToolDefinition } from "../plugin-api/types.js";
import type { StoredChatMessage, StoredToolCall } from "../sessions/types.js";
import { NO_API_KEY, outputLimitField, trimSlashes } from "./endpoint.js";
import { createHttpFetch } from "./http-fetch.js";
import { type ChunkLike, type FinishReason, type LlmUsage, ReplyAssembler } from "./llm-assemble.js";
import { classifyError, describeLlmFailure } from "./llm-errors.js";
import { retryDelayMs, retryOfError, shouldRetryAnswer } from "./model-retry.js";
import { chatRequestBody } from "./request-body.js";
import { loadSseParser, readSse, type SseBody } from "./sse-events.js";

/**
 * The model client: the only module that imports `openai`. Speaks the Chat Completions API to any
 * OpenAI-compatible endpoint (OpenAI, Ollama, llama.cpp, vLLM, LM Studio).
 *
 * Contract: expected failures (abort, output limit, HTTP and connection errors, a stream that breaks off) come
 * back as `{ ok: false }` values with one actionable line; `stream` and `listModels` throw only for bugs,
 * including an exception thrown by the caller's own callbacks, which is rethrown as is.
 *
 * `openai` is imported at the first model call or endpoint check, not with this module: a gateway start (and
 * every command that never calls the model) does not load its ~150 modules. Requests go through
 * `createHttpFetch` (http-fetch.ts), a keep-alive `node:http` client, instead of the built-in fetch. The SDK lists
 * models and defines the chat request: its URL and headers (built by the SDK once per retry count), its retry rule
 * (model-retry.ts) and its errors (the SDK's classes); `chatSender` sends it with bytes built by request-body.ts,
 * and the answer's event stream is read by sse-events.ts (with `eventsource-parser`).
 */

type Sdk = typeof import("openai");
let sdk: Promise<Sdk> | undefined;

/** The `openai` module, imported once, at first use. */
function loadSdk(): Promise<Sdk> {
  sdk ??= import("openai");
  return sdk;
}

/**
 * Loads the `openai` module now (the gateway's first model call would), and Node's own fetch with it: the SDK builds
 * every request's headers as a `Headers`, whose first use loads Node's bundled undici (~20-30 ms of the event loop
 * on the two-core machine). Resolves once both are loaded; rejects as the import does. The SDK's ~150 modules take
 * a few hundred milliseconds of the event loop to compile.
 */
export async function preloadModelSdk(): Promise<void> {
  await Promise.all([loadSdk(), loadSseParser()]);
  new Headers();
}

/**
 * The SDK's own timeout only covers the wait for headers, and its default (10 min) would cut prefill short of
 * the prefill watchdog (30 min by default). Time is the watchdogs' job: they abort through `signal`.
 */
const SDK_TIMEOUT_MS = 24 * 60 * 60 * 1000;

export { DEFAULT_BASE_URL, type Endpoint, NO_API_KEY, resolveEndpoint } from "./endpoint.js";
export type { FinishReason, LlmUsage };

export type LlmResult =
  | {
      ok: true;
      text: string;
      /** Authoritative: some servers say finish_reason "stop" while returning tool calls. */
      toolCalls: StoredToolCall[];
      finishReason: FinishReason;
      /** Absent when the provider sent no usage. */
      usage?: LlmUsage;
      /** The model that answered, as the server names it (else the requested one). */
      model: string;
    }
  | { ok: false; reason: "aborted" | "output-limit" | "error"; error: string; partialText: string };

export interface LlmStreamRequest {
  model: string;
  messages: StoredChatMessage[];
  /** Offered as OpenAI function tools; omitted from the request when empty. */
  tools?: ToolDefinition[];
  maxOutputTokens?: number;
  /** Sent as `reasoning_effort` only when set (models that do not reason may reject the field). */
  reasoningEffort?: "minimal" | "low" | "medium" | "high";
  signal: AbortSignal;
  /**
   * Ends the call as aborting `signal` would, for a wrapper of the client that must end it (gated-llm.ts) without a
   * controller of its own; set by the caller that owns `signal` (callModel).
   */
  cancel?: (reason: unknown) => void;
  /** Each piece of answer text, in order. */
  onDelta?: (text: string) => void;
  /** Once, at the first output of any kind (text, reasoning or a tool call): prefill is over. */
  onFirstToken?: () => void;
  /** Every chunk, output or not: the stream is alive. */
  onProgress?: () => void;
  /** Every chunk, with what it carried (the watchdogs tell output from reasoning and keep-alives). */
  onChunk?: (kind: "output" | "reasoning" | "keepalive") => void;
  /** Each piece of reasoning text (local servers' `reasoning_content`), in order. */
  onReasoning?: (text: string) => void;
}

export type ListModelsResult = { ok: true; models: string[] } | { ok: false; error: string };

export interface LlmClient {
  readonly baseUrl: string;
  stream(request: LlmStreamRequest): Promise<LlmResult>;
  listModels(signal: AbortSignal): Promise<ListModelsResult>;
}

export interface LlmClientOptions {
  baseUrl: string;
  apiKey: string;
  /** Retries on 408/409/429/5xx and connection errors (model-retry.ts); default 2, tests pass 0. */
  maxRetries?: number;
  /**
   * The wait before a retry: resolves after `ms`, rejects once `signal` aborts. Default a timer; tests pass one
   * that records the waits and resolves at once.
   */
  sleep?: (ms: number, signal: AbortSignal) => Promise<void>;
}

export function createLlmClient(options: LlmClientOptions): LlmClient {
  const baseUrl = trimSlashes(options.baseUrl);
  const maxRetries = options.maxRetries ?? 2;
  const sleep = options.sleep ?? abortableSleep;
  let connected: Promise<Connection> | undefined;
  const connect = (): Promise<Connection> => {
    connected ??= (async () => {
      const sdk = await loadSdk();
      const fetchFn = createHttpFetch();
      const client = new sdk.default({
        baseURL: baseUrl,
        apiKey: options.apiKey || NO_API_KEY,
        maxRetries,
        timeout: SDK_TIMEOUT_MS,
        fetch: fetchFn,
      });
      const chat = chatSender(client, sdk, fetchFn, maxRetries, sleep);
      return { client, sdk, chat };
    })();
    return connected;
  };
  const limitField = outputLimitField(baseUrl);

  async function stream(request: LlmStreamRequest): Promise<LlmResult> {
    const assembler = new ReplyAssembler();
    const failed = (reason: "aborted" | "output-limit" | "error", error: string): LlmResult => ({
      ok: false,
      reason,
      error,
      partialText: assembler.text,
    });
    const abortedResult = () => failed("aborted", "the model call was aborted");
    if (request.signal.aborted) return abortedResult();

    let receivedAny = false;
    let firstToken = false;
    let callbackError: { error: unknown } | undefined;
    let loaded: Sdk | undefined;
    try {
      const { chat, sdk } = await connect();
      loaded = sdk;
      const tools = (request.tools ?? []).map(convertTool);
      const params = {
        model: request.model,
        ...(tools.length > 0 ? { tools } : {}),
        ...(request.maxOutputTokens ? { [limitField]: request.maxOutputTokens } : {}),
        ...(request.reasoningEffort ? { reasoning_effort: request.reasoningEffort } : {}),
        stream: true as const,
        stream_options: { include_usage: true },
      };
      // The bytes sent are `body` (request-body.ts: what the session's last request encoded is reused).
      const response = await chat.send(chatRequestBody(params, request.messages), request.signal);
      // `send` answers errors before the stream (HTTP status, connection, retries); the stream is read here
      // (sse-events.ts, without the SDK's copies), doing with each event what the SDK's Stream does: `[DONE]`
      // ends the answer (what follows is read and ignored), an event carrying `error` fails as the SDK's APIError,
      // events of the Assistants API (`thread.*`) are not a chat completion's. An abort throws from the body.
      let done = false;
      await readSse(streamOf(response), (sse) => {
        if (done) return;
        if (sse.data.startsWith("[DONE]")) {
          done = true;
          return;
        }
        if (sse.event?.startsWith("thread.")) return;
        const chunk = JSON.parse(sse.data) as ChunkLike & { error?: unknown };
        if (chunk?.error) throw new sdk.APIError(undefined, chunk.error, undefined, response.headers);
        receivedAny = true;
        const effect = assembler.push(chunk);
        try {
          request.onProgress?.();
          request.onChunk?.(effect.kind);
          if (effect.reasoning) request.onReasoning?.(effect.reasoning);
          if (effect.produced && !firstToken) {
            firstToken = true;
            request.onFirstToken?.();
          }
          if (effect.text) request.onDelta?.(effect.text);
        } catch (error) {
          callbackError = { error };
          return false; // stopping the read aborts the request
        }
      });
    } catch (error) {
      if (request.signal.aborted) return abortedResult();
      const context = { baseUrl, model: request.model, midStream: receivedAny };
      return failed("error", describeLlmFailure(classifyError(error, loaded), context));
    }
    if (callbackError) throw callbackError.error;
    if (request.signal.aborted) return abortedResult();
    if (assembler.rawFinishReason === undefined) {
      return failed("error", "the model's answer was cut off: the stream ended without a finish reason");
    }
    if (assembler.finishReason === "length") {
      const limit = request.maxOutputTokens ? ` (maxOutputTokens ${request.maxOutputTokens})` : "";
      return failed("output-limit", `the model's answer hit the output limit${limit} and was cut off`);
    }
    const result: LlmResult = {
      ok: true,
      text: assembler.text,
      toolCalls: assembler.toolCalls(),
      finishReason: assembler.finishReason,
      model: assembler.model ?? request.model,
    };
    if (assembler.usage) result.usage = assembler.usage;
    return result;
  }

  // The SDK's own retries wait on a timer that its signal does not end (a gateway stopping while its endpoint is
  // down would wait out the backoff): the list is asked without them, and tried again here by the same rule, with
  // a wait that the signal ends.
  async function listModels(signal: AbortSignal): Promise<ListModelsResult> {
    let loaded: Sdk | undefined;
    try {
      const { client, sdk } = await connect();
      loaded = sdk;
      for (let retried = 0; ; retried++) {
        try {
          const page = await client.models.list({ signal, maxRetries: 0 });
          return { ok: true, models: page.data.map((model) => model.id) };
        } catch (error) {
          const again = retried < maxRetries && !signal.aborted && retryOfError(error, sdk);
          if (!again) throw error;
          await sleep(retryDelayMs(again.headers, retried), signal);
        }
      }
    } catch (error) {
      if (signal.aborted) return { ok: false, error: `model endpoint ${baseUrl} did not answer in time` };
      return { ok: false, error: describeLlmFailure(classifyError(error, loaded), { baseUrl }) };
    }
  }

  return { baseUrl, stream, listModels };
}

/** The SDK's client (model lists, the request's headers), its module (error classes), and the chat request. */
interface Connection {
  client: OpenAI;
  sdk: Sdk;
  chat: ChatSender;
}

/** Sends the streamed chat request: resolves with a 2xx answer whose body is the event stream, else throws. */
interface ChatSender {
  send(body: Buffer, signal: AbortSignal): Promise<Response>;
}

/**
 * The chat request as the SDK's `chat.completions.create(…).asResponse()` sends it, without the SDK's per-call
 * work (on the message path it cost 63-136 µs of ~600; docs/benchmarks.md, "What the tenth session changed"):
 * - the same URL and headers: the SDK builds them, once per retry count (`buildRequest`: its User-Agent and
 *   platform headers, `Authorization`, `X-Stainless-Retry-Count`), and `createHttpFetch` sends them;
 * - the same retries (model-retry.ts): up to `maxRetries` after a connection error or a retryable status, the
 *   failed answer's body cancelled first; the wait ends early when `signal` aborts (the SDK's does not);
 * - the same errors: a status it does not retry is the SDK's `APIError` for it (`APIError.generate`, with the
 *   server's JSON or text), a connection that fails its `APIConnectionError` with the system error as `cause`;
 *   once `signal` aborted, whatever is thrown, the caller reports an abort.
 */
function chatSender(
  client: OpenAI,
  sdk: Sdk,
  fetchFn: typeof fetch,
  maxRetries: number,
  sleep: (ms: number, signal: AbortSignal) => Promise<void>,
): ChatSender {
  const built = new Map<number, Promise<{ url: string; headers: Headers }>>();
  const requestFor = (retried: number) => {
    let request = built.get(retried);
    if (!request) {
      request = client
        .buildRequest(
          { method: "post", path: "/chat/completions", headers: { "content-type": "application/json" } },
          { retryCount: retried },
        )
        .then(({ req, url }) => ({ url, headers: new Headers(req.headers) }));
      built.set(retried, request);
    }
    return request;
  };
  return {
    async send(body, signal) {
      for (let retried = 0; ; retried++) {
        const { url, headers } = await requestFor(retried);
        let response: Response;
        try {
          // createHttpFetch sends bytes as they are (the DOM type does not list a Node Buffer).
          response = await fetchFn(url, {
            method: "POST",
            headers,
            body: body as unknown as BodyInit,
            signal,
          });
        } catch (error) {
          if (signal.aborted || retried >= maxRetries) {
            throw new sdk.APIConnectionError({
              cause: error instanceof Error ? error : new Error(String(error)),
            });
          }
          await sleep(retryDelayMs(undefined, retried), signal);
          continue;
        }
        if (response.ok) return response;
        if (retried < maxRetries && shouldRetryAnswer(response.status, response.headers)) {
          await cancelBody(response);
          await sleep(retryDelayMs(response.headers, retried), signal);
          continue;
        }
        const text = await response.text().catch((error: unknown) => String(error));
        const json = parseJson(text);
        throw sdk.APIError.generate(
          response.status,
          json as object | undefined,
          json === undefined ? text : undefined,
          response.headers,
        );
      }
    },
  };
}

/** Drops an answer's body unread: its connection is not read on (the SDK does the same before a retry). */
async function cancelBody(response: Response): Promise<void> {
  const body: unknown = response.body;
  try {
    if (body instanceof ReadableStream) await body.cancel();
    else if (body && typeof body === "object" && Symbol.asyncIterator in body) {
      await (body as AsyncIterable<Uint8Array>)[Symbol.asyncIterator]().return?.();
    }
  } catch {
    // Nothing to drop any more.
  }
}

/** The default wait before a retry: a timer, ended (rejecting) by `signal`. */
export function abortableSleep(ms: number, signal: AbortSignal): Promise<void> {
  return delay(ms, undefined, { signal });
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

/**
 * The body of a streamed answer as bytes: `createHttpFetch`'s answer is an async iterable that also pushes its
 * bytes (`each`, read without a promise per piece), and a web `ReadableStream` is an async iterable (the built-in
 * fetch, used for what http-fetch.ts does not send itself).
 */
function streamOf(response: Response): SseBody {
  const body: unknown = response.body;
  if (body && typeof body === "object" && Symbol.asyncIterator in body) return body as SseBody;
  throw new Error("the model's answer has no body to stream");
}

export function convertTool(tool: ToolDefinition): ChatCompletionTool {
  return {
    type: "function",
    function: { name: tool.name, description: tool.description, parameters: tool.parameters },
  };
}
