import { request as httpRequest, type IncomingMessage } from "node:http";
import { ClawdisError } from "../core/errors.js";
import type { OutcomeBody } from "../plugin-api/outcome-body.js";
import { readSse } from "../plugin-api/sse-parse.js";
import type { GatewayConnection } from "./gateway-client.js";

/** What a turn shows while it runs (`clawdis agent` on a terminal); see LiveReply. */
export interface TurnListener {
  delta(text: string): void;
  toolCall(name: string, args: string): void;
  toolResult(name: string, ok: boolean, output: string): void;
}

export interface AgentRequest {
  message: string;
  messageId: string;
  session?: string;
}

/** The most useful words of a request's failure (a `fetch` one says "fetch failed" and puts the reason in `cause`). */
function reasonOf(error: unknown): string {
  const parts: string[] = [];
  let current: unknown = error;
  for (let depth = 0; depth < 4 && current instanceof Error; depth++) {
    const code = (current as NodeJS.ErrnoException).code;
    const text = code && !current.message.includes(code) ? `${code} ${current.message}` : current.message;
    if (text && text !== "fetch failed" && text !== "terminated") parts.push(text);
    current = current.cause;
  }
  return parts.length > 0 ? parts.join(": ") : "the connection broke";
}

function asObject(value: unknown): Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value)
    ? (value as Record<string, unknown>)
    : {};
}

/** The text of an answer's body, whole (UTF-8); "" when it breaks off. */
function textOf(res: IncomingMessage): Promise<string> {
  return new Promise((resolve) => {
    let text = "";
    res.setEncoding("utf8");
    res.on("data", (part: string) => {
      text += part;
    });
    res.once("end", () => resolve(text));
    res.once("error", () => resolve(""));
  });
}

function jsonOf(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

/**
 * `POST` of `body` to `url` over `node:http`, on a connection of its own (the command exits after it); resolves
 * with the answer once its headers came, rejects with the connection's error. Not the built-in `fetch`: a fetch
 * to a live server loads undici and compiles its HTTP parser (WebAssembly) on a background thread, ~150 ms of CPU
 * on this machine for every `clawdis agent` (src/cli/local-request.ts says the same of the other commands).
 */
function post(url: string, headers: Record<string, string>, body: string): Promise<IncomingMessage> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(
      url,
      {
        method: "POST",
        headers: { ...headers, "content-length": String(Buffer.byteLength(body)) },
        agent: false,
      },
      resolve,
    );
    req.once("error", reject);
    req.end(body);
  });
}

/**
 * One turn through the running gateway: `POST /api/agent` with `accept: text/event-stream`, one `messageId` (a
 * retry is a duplicate, not a second turn). Events go to `listener` as they arrive; resolves with the `done`
 * body. Every failure is a GATEWAY_UNREACHABLE error with one sentence, never a stack:
 * - no answer at all (refused, reset before the headers): the gateway may not have the message;
 * - 401: the token in `tokenPath` is refused; another status: what the gateway said;
 * - the stream breaks or ends after the gateway accepted the message (it answered 200 only after journaling
 *   it): the message is safe in the journal and is answered after the gateway restarts.
 */
export async function streamAgentTurn(
  connection: GatewayConnection,
  request: AgentRequest,
  tokenPath: string,
  listener?: TurnListener,
): Promise<OutcomeBody> {
  const { url } = connection;
  let res: IncomingMessage;
  try {
    res = await post(
      `${url}/api/agent`,
      {
        authorization: `Bearer ${connection.token}`,
        "content-type": "application/json",
        accept: "text/event-stream",
      },
      JSON.stringify({
        message: request.message,
        channel: "cli",
        messageId: request.messageId,
        ...(request.session ? { session: request.session } : {}),
      }),
    );
  } catch (error) {
    throw new ClawdisError(
      "GATEWAY_UNREACHABLE",
      `the gateway at ${url} did not confirm the message (${reasonOf(error)}); it may not have it: check \`clawdis status\`, then send it again`,
      { cause: error },
    );
  }
  const status = res.statusCode ?? 0;
  if (status < 200 || status > 299) {
    const body = asObject(jsonOf(await textOf(res)));
    if (status === 401) {
      throw new ClawdisError(
        "GATEWAY_UNREACHABLE",
        `the gateway at ${url} refused the token in ${tokenPath}; restart the gateway or fix the token file`,
      );
    }
    const why = typeof body.message === "string" ? body.message : "error";
    throw new ClawdisError("GATEWAY_UNREACHABLE", `the gateway answered ${status}: ${why}`);
  }
  if (!(res.headers["content-type"] ?? "").startsWith("text/event-stream")) {
    // A gateway that answers with the JSON body instead of a stream.
    const text = await textOf(res);
    const body = jsonOf(text);
    if (body === undefined) {
      throw new ClawdisError(
        "GATEWAY_UNREACHABLE",
        `the gateway at ${url} answered ${status} with no reply to read`,
      );
    }
    return body as OutcomeBody;
  }
  let sessionKey: string | undefined;
  try {
    for await (const event of readSse(res)) {
      let parsed: unknown;
      try {
        parsed = JSON.parse(event.data);
      } catch {
        continue; // Not an event of ours: skipped.
      }
      const data = asObject(parsed);
      if (event.event === "accepted" && typeof data.sessionKey === "string") sessionKey = data.sessionKey;
      else if (event.event === "delta" && typeof data.text === "string") listener?.delta(data.text);
      else if (event.event === "tool-call") {
        listener?.toolCall(String(data.name ?? "tool"), String(data.arguments ?? ""));
      } else if (event.event === "tool-result") {
        listener?.toolResult(String(data.name ?? "tool"), data.ok !== false, String(data.output ?? ""));
      } else if (event.event === "done") return data as unknown as OutcomeBody;
    }
  } catch (error) {
    throw midTurn(url, sessionKey, error);
  }
  throw midTurn(url, sessionKey, undefined);
}

function midTurn(url: string, sessionKey: string | undefined, cause: unknown): ClawdisError {
  const where = sessionKey ? ` (session ${sessionKey})` : "";
  return new ClawdisError(
    "GATEWAY_UNREACHABLE",
    `the gateway at ${url} went away during the turn. Your message is safe in its journal and will be answered${where} after the gateway restarts (\`clawdis gateway\`)`,
    { cause },
  );
}
