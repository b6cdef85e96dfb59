import { EventEmitter } from "node:events";
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { TITLE_PROMPT_START } from "../../src/sessions/session-title.js";
import { type WaitOptions, waitWithDeadline } from "../helpers/wait-deadline.js";

/**
 * A scripted OpenAI-compatible server on 127.0.0.1 for tests: `POST /v1/chat/completions` (SSE when
 * `stream: true`, plain JSON otherwise) and `GET /v1/models`. It records every request and answers each with
 * the next enqueued reply, or with the default handler when the queue is empty.
 *
 * Streams look like OpenAI's: a first chunk with `role`, content deltas, tool-call fragments keyed by `index`
 * (`id` and `function.name` only in the first fragment of a call, `arguments` split across fragments), a chunk
 * with `finish_reason`, a usage chunk whose `choices` is empty (only when the request asked for it with
 * `stream_options.include_usage`), then `data: [DONE]`.
 *
 * `GET /v1/models` requests are recorded apart (`modelRequests`); while `hangModels` is set they get no answer
 * until the client goes away or `releaseModels()` is called (an endpoint whose model list hangs).
 *
 * Over 400 lines because it is one fake of one API: the reply queue, the recorded requests and the stream's
 * wire format are shared by every route, which pieces in files of their own would each reach into.
 */

export interface FakeToolCall {
  name: string;
  /** A string is sent verbatim (it may be invalid JSON on purpose); an object is JSON-encoded. */
  arguments: string | object;
  id?: string;
}

export interface FakeUsage {
  prompt_tokens: number;
  completion_tokens: number;
  total_tokens: number;
}

export interface FakeReply {
  text?: string;
  toolCalls?: FakeToolCall[];
  /** Default: "tool_calls" when there are tool calls, else "stop". `null`: no finish_reason is ever sent. */
  finishReason?: "stop" | "tool_calls" | "length" | "content_filter" | null;
  /** `null`: send no usage. Absent: a rough estimate (request characters / 4). */
  usage?: FakeUsage | null;
  /** Split the text into this many content deltas (default: up to 4). */
  chunks?: number;
  /** Wait this long before sending the response headers. */
  delayMs?: number;
  /** Wait this long after each streamed chunk but the last (a slow model; ends early when the client goes away). */
  chunkDelayMs?: number;
  /** Never finish until the client goes away or `fake.release()` is called (which lets it finish normally). */
  hang?: "before-headers" | "after-first-chunk" | "after-first-output";
  /**
   * Destroy the connection: before any answer (a server that went away: the client sees ECONNRESET), or after the
   * first chunk (a server that died mid-answer).
   */
  destroy?: "before-headers" | "after-first-chunk";
  /**
   * After the first chunk, an event `data: {"error": {"message": …}}` and the end of the stream (a server that
   * fails mid-answer and says why, as OpenAI and vLLM do).
   */
  streamError?: string;
  /** Answer with this HTTP status and an OpenAI-style error body instead of a completion. */
  status?: number;
  /** The error message for `status` (default "fake error <status>"). */
  errorMessage?: string;
  /** The error code for `status` (e.g. "model_not_found"). */
  errorCode?: string;
  /** Headers sent with `status` (e.g. `retry-after`, `x-should-retry`). */
  errorHeaders?: Record<string, string>;
  /** The model name in the response (default: the requested model). */
  model?: string;
  /** Reasoning deltas (`reasoning_content`) streamed before the text. */
  reasoning?: string;
  /**
   * After the output and before the finish: a chunk of this kind every `everyMs` until the client goes away or
   * `release()` (then the reply finishes normally). `keepalive`: an empty delta; `reasoning`: reasoning text
   * only; `usage`: a usage-only chunk (empty `choices`). A model that thinks or idles forever.
   */
  tail?: { kind: "keepalive" | "reasoning" | "usage"; everyMs: number };
}

/** The request body as the SDK sends it; only the fields tests look at are typed. */
export interface ChatRequestBody {
  model: string;
  messages: { role: string; content?: unknown; tool_calls?: unknown[]; tool_call_id?: string }[];
  stream?: boolean;
  stream_options?: { include_usage?: boolean };
  tools?: { type: string; function: { name: string; description?: string; parameters?: unknown } }[];
  max_tokens?: number;
  max_completion_tokens?: number;
  [field: string]: unknown;
}

export interface FakeRequest {
  /** 1-based arrival number. */
  n: number;
  method: string;
  path: string;
  headers: IncomingMessage["headers"];
  body: ChatRequestBody;
  /** Epoch ms when the request body was complete. */
  receivedAt: number;
  /** Resolves when the response ended: "finished" (fully sent) or "aborted" (the client went away first). */
  closed: Promise<"finished" | "aborted">;
}

/** One `GET /v1/models` request. */
export interface FakeModelsRequest {
  /** 1-based arrival number, counted apart from chat completion requests. */
  n: number;
  receivedAt: number;
  /** Resolves when the response ended: "finished" (fully sent) or "aborted" (the client went away first). */
  closed: Promise<"finished" | "aborted">;
  /** Whether the response is complete yet (false while it hangs). */
  answered(): boolean;
}

export interface FakeOpenAI {
  /** Base URL including `/v1`, e.g. `http://127.0.0.1:1234/v1`. */
  url: string;
  /** Every chat completion request received, in arrival order. */
  requests: FakeRequest[];
  /** Model ids listed by `GET /v1/models`. */
  models: string[];
  /**
   * Session title calls (their system prompt starts with TITLE_PROMPT_START), in arrival order: answered at once
   * with `titleText`, never from the queue, and not in `requests` (tests that count model calls do not see them).
   */
  titleRequests: ChatRequestBody[];
  titleText: string;
  /** Every `GET /v1/models` request received, in arrival order (not in `requests`). */
  modelRequests: FakeModelsRequest[];
  /**
   * While true, a `GET /v1/models` that arrives holds its answer until the client goes away or
   * `releaseModels()`; `release()` does not end it (chat hangs and model-list hangs are released apart).
   */
  hangModels: boolean;
  /**
   * Failures for the next `GET /v1/models` requests, one each, in order (a status and its headers, with an
   * OpenAI-style error body); the list answers once none is left.
   */
  modelsFailures: { status: number; headers?: Record<string, string> }[];
  /**
   * When set, every request (model list and chat) without `Authorization: Bearer <apiKey>` is answered 401 with
   * an OpenAI-style body, as OpenAI does (an endpoint that needs a key). Default undefined: any key, or none.
   */
  apiKey: string | undefined;
  /** `request` (FakeRequest) and `abort` (FakeRequest) events. */
  events: EventEmitter;
  enqueue(...replies: FakeReply[]): void;
  setDefault(handler: (body: ChatRequestBody) => FakeReply | Promise<FakeReply>): void;
  /**
   * Resolves with the n-th (1-based) chat completion request once it has arrived. Every wait rejects after
   * `timeoutMs` (default WAIT_DEADLINE_MS) saying what it waited for and how many requests came.
   */
  waitForRequest(n: number, options?: WaitOptions): Promise<FakeRequest>;
  /** Resolves when the client of the n-th request went away before its response was complete. */
  waitForAbort(n: number, options?: WaitOptions): Promise<FakeRequest>;
  /** Resolves with the n-th (1-based) `GET /v1/models` request once it has arrived. */
  waitForModelsRequest(n: number, options?: WaitOptions): Promise<FakeModelsRequest>;
  /** Answers every held `GET /v1/models` now, and clears `hangModels`. */
  releaseModels(): void;
  /** Lets every hanging reply (now and until the next `hold()`) carry on and finish. */
  release(): void;
  /** Makes `hang` replies hang again after a `release()`. */
  hold(): void;
  /** Closes the server and every open connection. */
  close(): Promise<void>;
}

export function echoReply(body: ChatRequestBody): FakeReply {
  const lastUser = [...body.messages].reverse().find((m) => m.role === "user");
  return { text: `echo: ${contentText(lastUser?.content)}` };
}

/** `[[bash:CMD]]` in a user message: `markerReply` asks for one `bash` call running CMD. */
export const BASH_MARKER = /\[\[bash:([^\]]*)\]\]/;
/** `[[slow:N]]` in a user message: `markerReply` streams its answer N ms per chunk. */
export const SLOW_MARKER = /\[\[slow:(\d+)\]\]/;
/** `[[hang]]` in a user message: `markerReply` holds the answer until the client goes away or `release()`. */
export const HANG_MARKER = "[[hang]]";

/**
 * A default handler for load and fault tests (`fake.setDefault(markerReply)`). It answers every user message
 * since the last final answer (an assistant message without tool calls): `echo: <text> | <text> …`, so a turn
 * that took in joined messages, or a replayed one, names each message it answers. Markers in those messages:
 * `[[bash:CMD]]` in a user message after the last tool result asks for one `bash` call running CMD first (only
 * when the request offers `bash`); `[[slow:N]]` streams the answer in 4 chunks N ms apart; `[[hang]]` holds it
 * (see `hang: "before-headers"`).
 */
export function markerReply(body: ChatRequestBody): FakeReply {
  const messages = body.messages ?? [];
  let answered = -1;
  let lastTurnStep = -1;
  messages.forEach((m, i) => {
    if (m.role === "assistant" && !(m.tool_calls && m.tool_calls.length > 0)) answered = i;
    if (m.role === "assistant" || m.role === "tool") lastTurnStep = i;
  });
  const pending = messages.slice(answered + 1).filter((m) => m.role === "user");
  const fresh = messages.slice(lastTurnStep + 1).filter((m) => m.role === "user");
  const texts = pending.map((m) => contentText(m.content));
  const all = texts.join("\n");
  const offersBash = (body.tools ?? []).some((t) => t.function.name === "bash");
  const command = fresh
    .map((m) => BASH_MARKER.exec(contentText(m.content))?.[1])
    .find((c) => c !== undefined);
  const slow = Math.max(0, ...texts.map((t) => Number(SLOW_MARKER.exec(t)?.[1] ?? 0)));
  const timing: FakeReply = {
    ...(slow > 0 ? { chunkDelayMs: slow, chunks: 4 } : {}),
    ...(all.includes(HANG_MARKER) ? { hang: "before-headers" as const } : {}),
  };
  if (command !== undefined && offersBash) {
    return { ...timing, toolCalls: [{ name: "bash", arguments: { command } }] };
  }
  return { ...timing, text: `echo: ${texts.join(" | ")}` };
}

function contentText(content: unknown): string {
  if (typeof content === "string") return content;
  if (Array.isArray(content)) {
    return content
      .map((part) => (part && typeof part === "object" && "text" in part ? String(part.text) : ""))
      .join("");
  }
  return "";
}

/** Splits `text` into `n` pieces of nearly equal length (fewer when the text is shorter). */
export function splitInto(text: string, n: number): string[] {
  const count = Math.max(1, Math.min(Math.floor(n), text.length));
  const size = Math.ceil(text.length / count);
  const parts: string[] = [];
  for (let i = 0; i < text.length; i += size) parts.push(text.slice(i, i + size));
  return parts.length > 0 ? parts : [""];
}

export interface FakeOpenAIOptions {
  /**
   * Whether each request is kept in `requests` (default true). A long benchmark passes false: `requests` stays
   * empty (numbering, events and `waitForRequest` of requests still to come work as before), so memory does
   * not grow with every request body.
   */
  keepRequests?: boolean;
}

export async function startFakeOpenAI(options: FakeOpenAIOptions = {}): Promise<FakeOpenAI> {
  const keepRequests = options.keepRequests ?? true;
  let requestCount = 0;
  const queue: FakeReply[] = [];
  let handler: (body: ChatRequestBody) => FakeReply | Promise<FakeReply> = echoReply;
  const requests: FakeRequest[] = [];
  const modelRequests: FakeModelsRequest[] = [];
  const events = new EventEmitter();
  events.setMaxListeners(0);
  let released = false;
  /** Responses whose connection closed (finished or not). */
  const gone = new WeakSet<ServerResponse>();
  const isGone = (res: ServerResponse) => gone.has(res) || res.destroyed;

  const server = createServer((req, res) => {
    void handle(req, res).catch((error: unknown) => {
      if (!res.headersSent) {
        res.writeHead(500, { "content-type": "application/json" });
        res.end(JSON.stringify({ error: { message: `fake server bug: ${String(error)}` } }));
      } else {
        res.destroy();
      }
    });
  });

  const fake: FakeOpenAI = {
    url: "",
    requests,
    models: ["fake-model"],
    modelRequests,
    titleRequests: [],
    titleText: "A test conversation",
    hangModels: false,
    modelsFailures: [],
    apiKey: undefined,
    events,
    enqueue: (...replies) => {
      queue.push(...replies);
    },
    setDefault: (fn) => {
      handler = fn;
    },
    waitForRequest: (n, options = {}) =>
      waitWithDeadline<FakeRequest>(
        () => `chat request #${n} at the fake OpenAI server (${requestCount} arrived)`,
        options.timeoutMs,
        (resolve) => {
          const found = requests[n - 1];
          if (found) resolve(found);
          const onRequest = (request: FakeRequest) => {
            if (request.n === n) resolve(request);
          };
          events.on("request", onRequest);
          return () => events.off("request", onRequest);
        },
      ),
    waitForAbort: async (n, options = {}) => {
      const request = await fake.waitForRequest(n, options);
      const how = await waitWithDeadline<"finished" | "aborted">(
        `the client of chat request #${n} to go away (its response is still open)`,
        options.timeoutMs,
        (resolve) => {
          void request.closed.then(resolve);
          return () => {};
        },
      );
      if (how !== "aborted") throw new Error(`request ${n} finished normally; its client did not go away`);
      return request;
    },
    waitForModelsRequest: (n, options = {}) =>
      waitWithDeadline<FakeModelsRequest>(
        () => `GET /v1/models #${n} at the fake OpenAI server (${modelRequests.length} arrived)`,
        options.timeoutMs,
        (resolve) => {
          const found = modelRequests[n - 1];
          if (found) resolve(found);
          const onRequest = (request: FakeModelsRequest) => {
            if (request.n === n) resolve(request);
          };
          events.on("models-request", onRequest);
          return () => events.off("models-request", onRequest);
        },
      ),
    releaseModels: () => {
      fake.hangModels = false;
      events.emit("release-models");
    },
    release: () => {
      released = true;
      events.emit("release");
    },
    hold: () => {
      released = false;
    },
    close: () =>
      new Promise((resolve, reject) => {
        events.emit("release");
        events.emit("release-models");
        server.closeAllConnections();
        server.close((error) => (error ? reject(error) : resolve()));
      }),
  };

  /** Resolves after `ms`, or earlier when the client went away. */
  function pause(res: ServerResponse, ms: number): Promise<void> {
    return new Promise((resolve) => {
      const timer = setTimeout(done, ms);
      function done() {
        clearTimeout(timer);
        res.off("close", done);
        resolve();
      }
      res.on("close", done);
    });
  }

  /** Resolves when the hang ends: "released", or "gone" when the client went away. */
  function waitHang(res: ServerResponse): Promise<"released" | "gone"> {
    if (isGone(res)) return Promise.resolve("gone");
    if (released) return Promise.resolve("released");
    return new Promise((resolve) => {
      const onRelease = () => done("released");
      const onClose = () => done("gone");
      const done = (how: "released" | "gone") => {
        events.off("release", onRelease);
        res.off("close", onClose);
        resolve(how);
      };
      events.on("release", onRelease);
      res.on("close", onClose);
    });
  }

  /** Resolves when a held `GET /v1/models` may answer ("released"), or "gone" when its client went away. */
  function waitModelsRelease(res: ServerResponse): Promise<"released" | "gone"> {
    if (res.destroyed) return Promise.resolve("gone");
    return new Promise((resolve) => {
      const onRelease = () => done("released");
      const onClose = () => done("gone");
      const done = (how: "released" | "gone") => {
        events.off("release-models", onRelease);
        res.off("close", onClose);
        resolve(how);
      };
      events.on("release-models", onRelease);
      res.on("close", onClose);
    });
  }

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = new URL(req.url ?? "/", "http://127.0.0.1");
    if (fake.apiKey !== undefined && req.headers.authorization !== `Bearer ${fake.apiKey}`) {
      return sendJson(res, 401, {
        error: {
          message: "Incorrect API key provided",
          type: "invalid_request_error",
          code: "invalid_api_key",
        },
      });
    }
    if (req.method === "GET" && url.pathname === "/v1/models") {
      const closed = new Promise<"finished" | "aborted">((resolve) => {
        res.on("close", () => resolve(res.writableFinished ? "finished" : "aborted"));
      });
      const request: FakeModelsRequest = {
        n: modelRequests.length + 1,
        receivedAt: Date.now(),
        closed,
        answered: () => res.writableFinished,
      };
      modelRequests.push(request);
      events.emit("models-request", request);
      if (fake.hangModels && (await waitModelsRelease(res)) === "gone") return;
      if (isGone(res)) return;
      const failure = fake.modelsFailures.shift();
      if (failure) {
        return sendJson(
          res,
          failure.status,
          { error: { message: `models failed with ${failure.status}`, type: "server_error" } },
          failure.headers,
        );
      }
      const data = fake.models.map((id) => ({
        id,
        object: "model",
        created: 1_700_000_000,
        owned_by: "fake",
      }));
      return sendJson(res, 200, { object: "list", data });
    }
    if (req.method !== "POST" || url.pathname !== "/v1/chat/completions") {
      return sendJson(res, 404, {
        error: { message: `no route ${req.method} ${url.pathname}`, type: "not_found" },
      });
    }

    res.on("close", () => gone.add(res));
    const closed = new Promise<"finished" | "aborted">((resolve) => {
      res.on("close", () => resolve(res.writableFinished ? "finished" : "aborted"));
    });
    const raw = await readBody(req);
    let body: ChatRequestBody;
    try {
      body = JSON.parse(raw) as ChatRequestBody;
    } catch {
      return sendJson(res, 400, {
        error: { message: "request body is not JSON", type: "invalid_request_error" },
      });
    }
    // A session title call (src/sessions/session-title.ts) is answered apart: never from the queue, not counted.
    const first = body.messages?.[0];
    if (
      first?.role === "system" &&
      typeof first.content === "string" &&
      first.content.startsWith(TITLE_PROMPT_START)
    ) {
      fake.titleRequests.push(body);
      events.emit("title-request", body);
      const titleReply: FakeReply = { text: fake.titleText };
      if (body.stream === true) return streamReply(res, body, titleReply);
      return sendJson(res, 200, completionJson(body, titleReply));
    }
    const request: FakeRequest = {
      n: ++requestCount,
      method: req.method,
      path: url.pathname,
      headers: req.headers,
      body,
      receivedAt: Date.now(),
      closed,
    };
    if (keepRequests) requests.push(request);
    void closed.then((how) => {
      if (how === "aborted") events.emit("abort", request);
    });
    events.emit("request", request);

    const reply = queue.shift() ?? (await handler(body));
    if (reply.delayMs) await new Promise((resolve) => setTimeout(resolve, reply.delayMs));
    if (reply.hang === "before-headers" && (await waitHang(res)) === "gone") return;
    if (isGone(res)) return;
    if (reply.destroy === "before-headers") {
      res.socket?.destroy();
      return;
    }

    if (reply.status !== undefined && reply.status >= 400) {
      const message = reply.errorMessage ?? `fake error ${reply.status}`;
      return sendJson(
        res,
        reply.status,
        {
          error: {
            message,
            type: reply.status >= 500 ? "server_error" : "invalid_request_error",
            code: reply.errorCode ?? null,
          },
        },
        reply.errorHeaders,
      );
    }
    if (body.stream === true) return streamReply(res, body, reply);
    return sendJson(res, 200, completionJson(body, reply));
  }

  async function streamReply(res: ServerResponse, body: ChatRequestBody, reply: FakeReply): Promise<void> {
    res.writeHead(200, {
      "content-type": "text/event-stream",
      "cache-control": "no-cache",
      connection: "keep-alive",
    });
    const all = streamChunks(body, reply);
    const finalAt = all.findIndex((c) => isFinalChunk(c));
    const chunks = reply.tail && finalAt >= 0 ? all.slice(0, finalAt) : all;
    const finals = reply.tail && finalAt >= 0 ? all.slice(finalAt) : [];
    let first = true;
    let hungOnOutput = false;
    for (const [index, chunk] of chunks.entries()) {
      if (isGone(res)) return;
      // Wait until each chunk is handed to the socket, so the client sees deltas as separate reads.
      await new Promise<void>((resolve) => res.write(`data: ${JSON.stringify(chunk)}\n\n`, () => resolve()));
      if (reply.chunkDelayMs && index < chunks.length - 1) await pause(res, reply.chunkDelayMs);
      if (first) {
        first = false;
        if (reply.destroy === "after-first-chunk") {
          res.socket?.destroy();
          return;
        }
        if (reply.streamError !== undefined) {
          const error = { error: { message: reply.streamError, type: "server_error", code: null } };
          res.end(`data: ${JSON.stringify(error)}\n\n`);
          return;
        }
        if (reply.hang === "after-first-chunk" && (await waitHang(res)) === "gone") return;
      } else if (reply.hang === "after-first-output" && !hungOnOutput) {
        // The first chunk that carries output (the first one only names the role).
        hungOnOutput = true;
        if ((await waitHang(res)) === "gone") return;
      }
    }
    if (reply.tail) {
      const tail = reply.tail;
      const base = {
        id: "chatcmpl-fake-tail",
        object: "chat.completion.chunk",
        created: 1_700_000_000,
        model: body.model,
      };
      const piece =
        tail.kind === "usage"
          ? { ...base, choices: [], usage: { prompt_tokens: 1, completion_tokens: 0, total_tokens: 1 } }
          : {
              ...base,
              choices: [
                {
                  index: 0,
                  delta: tail.kind === "reasoning" ? { reasoning_content: "hmm " } : {},
                  logprobs: null,
                  finish_reason: null,
                },
              ],
            };
      while (!isGone(res) && !released) {
        await new Promise<void>((resolve) =>
          res.write(`data: ${JSON.stringify(piece)}\n\n`, () => resolve()),
        );
        await pause(res, tail.everyMs);
      }
      for (const chunk of finals) {
        if (isGone(res)) return;
        await new Promise<void>((resolve) =>
          res.write(`data: ${JSON.stringify(chunk)}\n\n`, () => resolve()),
        );
      }
    }
    if (!isGone(res)) res.end("data: [DONE]\n\n");
  }

  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  fake.url = `http://127.0.0.1:${port}/v1`;
  return fake;
}

let idCounter = 0;
let callCounter = 0;

/** Every SSE chunk of a streamed reply, in order (without the final `[DONE]`). */
export function streamChunks(body: ChatRequestBody, reply: FakeReply): Record<string, unknown>[] {
  const id = `chatcmpl-fake-${++idCounter}`;
  const base = {
    id,
    object: "chat.completion.chunk",
    created: 1_700_000_000,
    model: reply.model ?? body.model,
  };
  const chunk = (delta: Record<string, unknown>, finishReason: string | null = null) => ({
    ...base,
    choices: [{ index: 0, delta, logprobs: null, finish_reason: finishReason }],
  });
  const out: Record<string, unknown>[] = [chunk({ role: "assistant", content: "" })];
  if (reply.reasoning) {
    for (const piece of splitInto(reply.reasoning, 2)) out.push(chunk({ reasoning_content: piece }));
  }
  const text = reply.text ?? "";
  if (text.length > 0) {
    for (const piece of splitInto(text, reply.chunks ?? 4)) out.push(chunk({ content: piece }));
  }
  (reply.toolCalls ?? []).forEach((call, index) => {
    const args = argumentsText(call);
    const [head, ...rest] = splitInto(args, 3);
    out.push(
      chunk({
        tool_calls: [
          {
            index,
            id: call.id ?? `call_fake_${++callCounter}`,
            type: "function",
            function: { name: call.name, arguments: "" },
          },
        ],
      }),
    );
    for (const piece of [head ?? "", ...rest]) {
      if (piece.length > 0) out.push(chunk({ tool_calls: [{ index, function: { arguments: piece } }] }));
    }
  });
  const finish = finishReasonOf(reply);
  if (finish !== null) out.push(chunk({}, finish));
  const usage = usageOf(body, reply);
  if (usage && body.stream_options?.include_usage === true) out.push({ ...base, choices: [], usage });
  return out;
}

/** The finish chunk or the usage chunk: what a `tail` holds back until it ends. */
function isFinalChunk(chunk: Record<string, unknown>): boolean {
  if ("usage" in chunk) return true;
  const choices = chunk.choices as { finish_reason?: unknown }[] | undefined;
  return (choices ?? []).some((c) => c.finish_reason !== null && c.finish_reason !== undefined);
}

function completionJson(body: ChatRequestBody, reply: FakeReply): Record<string, unknown> {
  const toolCalls = (reply.toolCalls ?? []).map((call) => ({
    id: call.id ?? `call_fake_${++callCounter}`,
    type: "function",
    function: { name: call.name, arguments: argumentsText(call) },
  }));
  const message: Record<string, unknown> = { role: "assistant", content: reply.text ?? null, refusal: null };
  if (toolCalls.length > 0) message.tool_calls = toolCalls;
  const usage = usageOf(body, reply);
  return {
    id: `chatcmpl-fake-${++idCounter}`,
    object: "chat.completion",
    created: 1_700_000_000,
    model: reply.model ?? body.model,
    choices: [{ index: 0, message, logprobs: null, finish_reason: finishReasonOf(reply) }],
    ...(usage ? { usage } : {}),
  };
}

function argumentsText(call: FakeToolCall): string {
  return typeof call.arguments === "string" ? call.arguments : JSON.stringify(call.arguments);
}

function finishReasonOf(reply: FakeReply): string | null {
  if (reply.finishReason !== undefined) return reply.finishReason;
  return (reply.toolCalls ?? []).length > 0 ? "tool_calls" : "stop";
}

function usageOf(body: ChatRequestBody, reply: FakeReply): FakeUsage | null {
  if (reply.usage !== undefined) return reply.usage;
  const promptTokens = Math.max(1, Math.ceil(JSON.stringify(body.messages ?? []).length / 4));
  const produced = (reply.text ?? "") + (reply.toolCalls ?? []).map(argumentsText).join("");
  const completionTokens = Math.max(1, Math.ceil(produced.length / 4));
  return {
    prompt_tokens: promptTokens,
    completion_tokens: completionTokens,
    total_tokens: promptTokens + completionTokens,
  };
}

function sendJson(
  res: ServerResponse,
  status: number,
  payload: unknown,
  headers: Record<string, string> = {},
): void {
  res.writeHead(status, { ...headers, "content-type": "application/json" });
  res.end(JSON.stringify(payload));
}

function readBody(req: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const parts: Buffer[] = [];
    req.on("data", (part: Buffer) => parts.push(part));
    req.on("end", () => resolve(Buffer.concat(parts).toString("utf8")));
    req.on("error", reject);
  });
}
