import {
  Agent as HttpAgent,
  request as httpRequest,
  type IncomingMessage,
  type RequestOptions,
} from "node:http";
import { createRequire } from "node:module";
import { urlToHttpOptions } from "node:url";
import { HttpAnswer } from "./http-answer.js";
import { wireHeaders } from "./wire-headers.js";

/**
 * The `fetch` the model client hands the `openai` SDK: one request over `node:http` / `node:https` with a
 * keep-alive agent, its answer the part of a `Response` the SDK uses (`HttpAnswer`, http-answer.ts: status,
 * headers, the body as an async iterable, text/json). On the per-message path it costs about 40 % less CPU per
 * streamed completion than the built-in fetch (undici's fetch algorithm and its request/response objects):
 * 370 against 210 µs per completion, measured on this machine with the SDK against the fake model server; the
 * answer without web streams took that further (http-answer.ts).
 *
 * Contract (as `fetch`):
 * - An aborted `signal` rejects the call with an `AbortError` before the answer's headers, and makes reading the
 *   body throw one after them (the SDK then ends its loop without throwing; llm-client checks `signal.aborted`).
 *   The socket is destroyed either way: a cancelled answer is never read on.
 * - A connection that fails rejects with the system error (its `code`: ECONNREFUSED, ENOTFOUND, …); one that breaks
 *   mid-answer makes reading the body throw it (ECONNRESET).
 * - Request bodies are strings or bytes (what the SDK sends to chat completions and model lists); anything else
 *   goes to the built-in fetch.
 */
type Https = typeof import("node:https");
let https: Https | undefined;

/**
 * `node:https`, loaded at the first https request: with TLS it is a few milliseconds of module loading that a
 * gateway talking to a local model (or to none yet) never needs, and the gateway's start creates this client
 * before it listens.
 */
function httpsModule(): Https {
  https ??= createRequire(import.meta.url)("node:https") as Https;
  return https;
}

export function createHttpFetch(): typeof fetch {
  const http = new HttpAgent({ keepAlive: true });
  let secure: HttpAgent | undefined;
  const agentFor = (protocol: "http:" | "https:"): HttpAgent => {
    if (protocol === "http:") return http;
    secure ??= new (httpsModule().Agent)({ keepAlive: true });
    return secure;
  };
  // The SDK asks for the same few URLs again and again: each is parsed, and turned into request options, once
  // for as long as it is the last one asked for (neither is ever changed here).
  let last: Target | undefined;
  return async (input, init) => {
    const href = input instanceof Request ? input.url : String(input);
    if (href !== last?.href) {
      const parsed = new URL(href);
      last = { href, url: parsed, options: urlToHttpOptions(parsed) };
    }
    const { url, options } = last;
    const body = init?.body;
    const plainBody =
      body === undefined || body === null || typeof body === "string" || body instanceof Uint8Array;
    if (input instanceof Request || !plainBody || (url.protocol !== "http:" && url.protocol !== "https:")) {
      return fetch(input, init);
    }
    return send(url, options, init ?? {}, agentFor(url.protocol), body ?? undefined);
  };
}

/**
 * Each header of a request's `headers` as a lower-case name and its value. A plain object (what grammY passes) is
 * read as it is: a web `Headers` built from it costs its validation on every Bot API call.
 */
export function eachHeader(
  given: HeadersInit | undefined,
  each: (name: string, value: string) => void,
): void {
  if (given === undefined) return;
  if (given instanceof Headers) {
    given.forEach((value, name) => {
      each(name, value);
    });
    return;
  }
  const pairs = Array.isArray(given) ? given : Object.entries(given);
  for (const [name, value] of pairs) {
    if (name !== undefined && value !== undefined) each(name.toLowerCase(), String(value));
  }
}

/** An answer's headers as a web `Headers`. */
function headersOf(res: IncomingMessage): Headers {
  const headers = new Headers();
  for (const [name, value] of Object.entries(res.headers)) {
    if (value === undefined) continue;
    if (Array.isArray(value)) for (const v of value) headers.append(name, v);
    else headers.set(name, value);
  }
  return headers;
}

/** A URL asked for, parsed, and as `node:http` request options (host, port, path, auth). */
interface Target {
  href: string;
  url: URL;
  options: RequestOptions;
}

const NULL_BODY_STATUSES = new Set([101, 204, 205, 304]);

/** The error a fetch rejects with when `signal` aborted it: its reason when that is an AbortError. */
export function abortError(signal: AbortSignal): Error {
  const reason: unknown = signal.reason;
  if (reason instanceof Error && reason.name === "AbortError") return reason;
  return new DOMException("This operation was aborted", "AbortError");
}

function send(
  url: URL,
  target: RequestOptions,
  init: RequestInit,
  agent: HttpAgent,
  body: string | Uint8Array | undefined,
): Promise<Response> {
  const signal = init.signal ?? undefined;
  return new Promise((resolve, reject) => {
    if (signal?.aborted) {
      reject(abortError(signal));
      return;
    }
    // As raw name/value pairs (wire-headers.ts): Node stores them as given, without a `setHeader` per header.
    const headers = wireHeaders(url, (each) => eachHeader(init.headers, each), body);
    const request = url.protocol === "https:" ? httpsModule().request : httpRequest;
    let response: IncomingMessage | undefined;
    const onAbort = () => {
      const error = abortError(signal as AbortSignal);
      if (response) response.destroy(error);
      else req.destroy(error);
    };
    const done = () => signal?.removeEventListener("abort", onAbort);
    const req = request({ ...target, method: init.method ?? "GET", headers, agent }, (res) => {
      response = res;
      res.once("close", done);
      const status = res.statusCode ?? 0;
      const nullBody = NULL_BODY_STATUSES.has(status) || init.method === "HEAD";
      if (nullBody) res.resume();
      const failure = (error: Error) => (signal?.aborted ? abortError(signal) : error);
      const reply = new HttpAnswer(
        url.href,
        status,
        res.statusMessage ?? "",
        () => headersOf(res),
        nullBody ? undefined : res,
        failure,
      );
      // What the SDK and llm-client use of a Response, without the web streams (http-answer.ts).
      resolve(reply as unknown as Response);
    });
    signal?.addEventListener("abort", onAbort, { once: true });
    req.once("error", (error) => {
      done();
      reject(error);
    });
    req.end(body);
  });
}
