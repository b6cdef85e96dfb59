import type { ServerResponse } from "node:http";
import { describeError } from "../core/errors.js";
import type { Gateway } from "../gateway.js";
import type { HttpRequest } from "../plugin-api/types.js";
import type { HttpServer } from "./http-server.js";
import {
  isProblem,
  OPENAI_MODEL_ID,
  type OpenAiAsk,
  type OpenAiProblem,
  parseChatRequest,
  parseJsonObject,
  parseResponsesRequest,
} from "./openai-request.js";
import {
  chatChunk,
  chatCompletion,
  errorBody,
  type OpenAiReply,
  outcomeProblem,
  ResponseEvents,
  replyText,
  responseObject,
} from "./openai-shapes.js";
import { type OpenAiTurn, OpenAiTurns } from "./openai-turns.js";

/**
 * The OpenAI-compatible API on the gateway's port (docs/http-api.md, "OpenAI-compatible API"): `GET /v1/models`,
 * `POST /v1/chat/completions`, `POST /v1/responses`, streamed (SSE) and not. Off unless `gateway.openai.enabled`
 * (read at each request: a config change applies live); behind the gateway token as a bearer token. Every error is
 * in OpenAI's shape, `{error: {message, type, param, code}}`.
 */
export function registerOpenAiApi(gateway: Gateway, server: HttpServer): void {
  const turns = new OpenAiTurns(gateway);
  const guarded =
    (handler: (req: HttpRequest, res: ServerResponse) => Promise<void>) =>
    async (req: HttpRequest, res: ServerResponse): Promise<void> => {
      if (!gateway.config.gateway.openai.enabled) {
        sendProblem(res, {
          status: 404,
          message: "the OpenAI-compatible API is off: set gateway.openai.enabled to true",
          type: "invalid_request_error",
          param: null,
          code: "not_found",
        });
        return;
      }
      if (!req.authorized) {
        sendProblem(res, {
          status: 401,
          message:
            "send the gateway token (<state>/gateway.token) as the API key: 'Authorization: Bearer <token>'",
          type: "invalid_request_error",
          param: null,
          code: "invalid_api_key",
        });
        return;
      }
      try {
        await handler(req, res);
      } catch (error) {
        gateway.options.logger.error("openai api: the request failed", {
          path: req.path,
          error: describeError(error),
        });
        sendProblem(res, {
          status: 500,
          message: `the gateway failed: ${describeError(error)}`,
          type: "api_error",
          param: null,
          code: "internal_error",
        });
      }
    };
  // Checked by the handler: a missing token is 401 in OpenAI's shape, a disabled API 404.
  const open = { auth: false };
  server.route(
    "GET",
    "/v1/models",
    guarded(async (_req, res) => sendJson(res, 200, await modelList(gateway))),
    open,
  );
  server.route(
    "GET",
    "/v1/models/:id",
    guarded(async (req, res) => {
      const list = await modelList(gateway);
      const model = list.data.find((m) => m.id === req.params.id);
      if (model) sendJson(res, 200, model);
      else {
        sendProblem(res, {
          status: 404,
          message: `The model '${req.params.id}' does not exist`,
          type: "invalid_request_error",
          param: "model",
          code: "model_not_found",
        });
      }
    }),
    open,
  );
  server.route(
    "POST",
    "/v1/chat/completions",
    guarded((req, res) => answer(turns, req, res, parseChatRequest, chatAnswer)),
    open,
  );
  server.route(
    "POST",
    "/v1/responses",
    guarded((req, res) => answer(turns, req, res, parseResponsesRequest, responsesAnswer)),
    open,
  );
}

type Answer = (res: ServerResponse, ask: OpenAiAsk, turn: OpenAiTurn) => Promise<void>;

async function answer(
  turns: OpenAiTurns,
  req: HttpRequest,
  res: ServerResponse,
  parse: (body: Record<string, unknown>, header: string | string[] | undefined) => OpenAiAsk | OpenAiProblem,
  write: Answer,
): Promise<void> {
  const body = parseJsonObject(await req.body());
  if (isProblem(body)) return sendProblem(res, body);
  const ask = parse(body.json, req.headers["x-clawdis-session"]);
  if (isProblem(ask)) return sendProblem(res, ask);
  const key = req.headers["idempotency-key"];
  const turn = await turns.start(ask, Array.isArray(key) ? key[0] : key);
  if (isProblem(turn)) return sendProblem(res, turn);
  await write(res, ask, turn);
}

/** `/v1/chat/completions`: one `chat.completion`, or `chat.completion.chunk` events ending `data: [DONE]`. */
const chatAnswer: Answer = async (res, ask, turn) => {
  const reply: OpenAiReply = { id: `chatcmpl-${turn.base}`, created: turn.created, model: ask.model };
  if (!ask.stream) {
    const outcome = await turn.done;
    const failed = outcomeProblem(outcome);
    if (failed) sendProblem(res, failed);
    else sendJson(res, 200, chatCompletion(reply, outcome));
    return;
  }
  const sse = openSse(res);
  sse.data(chatChunk(reply, { role: true, text: "" }));
  let streamed = "";
  const unfollow = turn.follow((text) => {
    streamed += text;
    sse.data(chatChunk(reply, { text }));
  });
  res.on("close", unfollow);
  const outcome = await turn.done;
  unfollow();
  const failed = outcomeProblem(outcome);
  if (failed) sse.data(errorBody(failed));
  else {
    const rest = unstreamed(replyText(outcome), streamed);
    if (rest.length > 0) sse.data(chatChunk(reply, { text: rest }));
    sse.data(chatChunk(reply, { finish: outcome }));
    if (ask.includeUsage) sse.data(chatChunk(reply, { usage: outcome }));
  }
  sse.done();
};

/** `/v1/responses`: one `response`, or the Responses API's events ending with `response.completed`. */
const responsesAnswer: Answer = async (res, ask, turn) => {
  const reply: OpenAiReply = { id: `resp_${turn.base}`, created: turn.created, model: ask.model };
  if (!ask.stream) {
    const outcome = await turn.done;
    const failed = outcomeProblem(outcome);
    if (failed) sendProblem(res, failed);
    else sendJson(res, 200, responseObject(reply, outcome));
    return;
  }
  const events = new ResponseEvents(reply);
  const sse = openSse(res);
  for (const event of events.opening()) sse.event(event);
  let streamed = "";
  const unfollow = turn.follow((text) => {
    streamed += text;
    sse.event(events.delta(text));
  });
  res.on("close", unfollow);
  const outcome = await turn.done;
  unfollow();
  const failed = outcomeProblem(outcome);
  if (failed) sse.event(events.error(failed));
  else {
    const rest = unstreamed(replyText(outcome), streamed);
    if (rest.length > 0) sse.event(events.delta(rest));
    for (const event of events.closing(outcome)) sse.event(event);
  }
  sse.end();
};

/**
 * What of the reply the stream has not carried: the rest after what was streamed, or the whole reply when nothing
 * was (a command's answer, a notice). A reply that does not continue the streamed text adds nothing.
 */
export function unstreamed(reply: string, streamed: string): string {
  if (streamed.length === 0) return reply;
  return reply.startsWith(streamed) ? reply.slice(streamed.length) : "";
}

/** The models: `clawdis` (the primary session) and `clawdis:<key>` for each session the store holds. */
async function modelList(
  gateway: Gateway,
): Promise<{ object: "list"; data: { id: string; object: "model"; created: number; owned_by: string }[] }> {
  const created = Math.floor(gateway.startedAt / 1000);
  const keys = Object.keys(await gateway.store.load()).sort();
  const ids = [OPENAI_MODEL_ID, ...keys.map((key) => `${OPENAI_MODEL_ID}:${key}`)];
  return { object: "list", data: ids.map((id) => ({ id, object: "model", created, owned_by: "clawdis" })) };
}

function sendJson(
  res: ServerResponse,
  status: number,
  body: unknown,
  headers: Record<string, string> = {},
): void {
  res.writeHead(status, {
    "content-type": "application/json; charset=utf-8",
    "cache-control": "no-store",
    ...headers,
  });
  res.end(`${JSON.stringify(body)}\n`);
}

/** The errors a retry may get past: a full journal, a passing failure, a restarting gateway, a turn still running. */
const RETRYABLE: ReadonlySet<string | null> = new Set([
  "too_many_waiting",
  "unavailable",
  "stopping",
  "idempotency_key_in_progress",
]);

/** The error in OpenAI's shape; `x-should-retry: false` tells the SDKs not to retry what a retry cannot mend. */
function sendProblem(res: ServerResponse, problem: OpenAiProblem): void {
  if (res.headersSent) {
    res.end();
    return;
  }
  const retry: Record<string, string> = RETRYABLE.has(problem.code) ? {} : { "x-should-retry": "false" };
  sendJson(res, problem.status, errorBody(problem), retry);
}

/**
 * A server-sent event stream as OpenAI's: `data:` lines (chat completions; `done` ends with `data: [DONE]`), or
 * `event:` + `data:` (the Responses API). Writes to a client that went away are dropped; comments every 15 s keep
 * proxies from closing it.
 */
function openSse(res: ServerResponse): {
  data(value: unknown): void;
  event(value: Record<string, unknown>): void;
  done(): void;
  end(): void;
} {
  res.writeHead(200, {
    "content-type": "text/event-stream; charset=utf-8",
    "cache-control": "no-store",
    connection: "keep-alive",
    "x-accel-buffering": "no",
  });
  const keepAlive = setInterval(() => write(": keep-alive\n\n"), 15_000);
  keepAlive.unref();
  res.on("close", () => clearInterval(keepAlive));
  function write(text: string): void {
    if (!res.writableEnded && !res.destroyed) res.write(text);
  }
  function end(): void {
    clearInterval(keepAlive);
    if (!res.writableEnded) res.end();
  }
  return {
    data: (value) => write(`data: ${JSON.stringify(value)}\n\n`),
    event: (value) => write(`event: ${String(value.type)}\ndata: ${JSON.stringify(value)}\n\n`),
    done() {
      write("data: [DONE]\n\n");
      end();
    },
    end,
  };
}
