import { whyInvalidSessionKey } from "../sessions/session-key-rules.js";

/**
 * Reading a request of the OpenAI-compatible API (docs/http-api.md, "OpenAI-compatible API"). Pure: each function
 * returns what the request asks for, or the problem as an OpenAI error (`OpenAiProblem`).
 *
 * The gateway owns the history: only the newest user message of the request is its input (its text and image
 * parts); earlier messages, system prompts and `instructions` are ignored. Routing: `model` "clawdis" is the
 * primary session, "clawdis:<key>" session `<key>`; the header `x-clawdis-session` names a session and wins over
 * `model`.
 */

/** The model id of the primary session; `clawdis:<key>` is session `<key>`. */
export const OPENAI_MODEL_ID = "clawdis";

/** An error as the OpenAI API gives it: HTTP status, and `{error: {message, type, param, code}}`. */
export interface OpenAiProblem {
  status: number;
  message: string;
  type: string;
  param: string | null;
  code: string | null;
}

/** An image part of the input: its bytes from a `data:` URL, or a URL the gateway does not fetch. */
export type OpenAiImage = { mimeType: string; base64: string } | { url: string };

/** What a request asks for. `sessionKey` absent: the primary session. */
export interface OpenAiAsk {
  text: string;
  /** The image parts of the newest user message, in order. */
  images: OpenAiImage[];
  /** The model id the answer names (what the request said, or `clawdis`). */
  model: string;
  sessionKey?: string;
  stream: boolean;
  /** Chat completions: `stream_options.include_usage` (a usage chunk before `[DONE]`). */
  includeUsage: boolean;
}

export function badRequest(message: string, param: string | null, code: string | null = null): OpenAiProblem {
  return { status: 400, message, type: "invalid_request_error", param, code };
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** The body as a JSON object (`json`), or the problem. */
export function parseJsonObject(text: string): { json: Record<string, unknown> } | OpenAiProblem {
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    return badRequest("the body must be JSON", null);
  }
  return isObject(body) ? { json: body } : badRequest("the body must be a JSON object", null);
}

export function isProblem(value: unknown): value is OpenAiProblem {
  return isObject(value) && typeof value.status === "number" && typeof value.type === "string";
}

/**
 * The session a request names: the header wins over `model`. `undefined` key: the primary session. A model that is
 * not `clawdis` or `clawdis:<key>` is 404 `model_not_found`; a key the store cannot hold is 400.
 */
export function routeOf(
  model: unknown,
  header: string | string[] | undefined,
): { model: string; sessionKey?: string } | OpenAiProblem {
  if (model !== undefined && typeof model !== "string") return badRequest("model must be a string", "model");
  const name = model ?? OPENAI_MODEL_ID;
  let key: string | undefined;
  if (name !== OPENAI_MODEL_ID) {
    if (!name.startsWith(`${OPENAI_MODEL_ID}:`)) {
      return {
        status: 404,
        message: `The model '${name}' does not exist: use "${OPENAI_MODEL_ID}" (the primary session) or "${OPENAI_MODEL_ID}:<session key>"`,
        type: "invalid_request_error",
        param: "model",
        code: "model_not_found",
      };
    }
    key = name.slice(OPENAI_MODEL_ID.length + 1);
    const bad = whyInvalidSessionKey(key);
    if (bad !== undefined) return badRequest(`model: session key ${bad}`, "model");
  }
  const fromHeader = Array.isArray(header) ? header[0] : header;
  if (fromHeader !== undefined) {
    const bad = whyInvalidSessionKey(fromHeader);
    if (bad !== undefined) return badRequest(`x-clawdis-session: ${bad}`, "x-clawdis-session");
    key = fromHeader;
  }
  return { model: name, ...(key !== undefined ? { sessionKey: key } : {}) };
}

/** The image of a URL: a base64 `data:image/…` URL's bytes, else the URL itself. */
export function imageOf(url: string): OpenAiImage {
  const match = /^data:(image\/[\w.+-]+);base64,([A-Za-z0-9+/=\s]*)$/.exec(url);
  return match ? { mimeType: match[1] as string, base64: (match[2] as string).replace(/\s/g, "") } : { url };
}

/** The URL of an image part: chat's `image_url: {url}` (or a plain string), the Responses API's `image_url`. */
function imageUrlOf(part: Record<string, unknown>): string | undefined {
  const field = part.image_url;
  if (typeof field === "string") return field;
  if (isObject(field) && typeof field.url === "string") return field.url;
  return undefined;
}

interface Parts {
  text: string;
  images: OpenAiImage[];
}

/**
 * The text parts (joined by line breaks) and image parts of a message's content: a string, or parts of which those
 * of `textTypes` are text and those of `imageType` images; the rest is passed over. Undefined: no content.
 */
function partsOf(content: unknown, textTypes: readonly string[], imageType: string): Parts | undefined {
  if (typeof content === "string") return { text: content, images: [] };
  if (!Array.isArray(content)) return undefined;
  const texts: string[] = [];
  const images: OpenAiImage[] = [];
  for (const part of content) {
    if (typeof part === "string") texts.push(part);
    else if (!isObject(part)) continue;
    else if (textTypes.includes(String(part.type)) && typeof part.text === "string") texts.push(part.text);
    else if (part.type === imageType) {
      const url = imageUrlOf(part);
      if (url !== undefined) images.push(imageOf(url));
    }
  }
  return { text: texts.join("\n"), images };
}

/** Text or an image: something to hand in. */
function hasInput(parts: Parts | undefined): parts is Parts {
  return parts !== undefined && (parts.text.trim() !== "" || parts.images.length > 0);
}

function streamFlag(body: Record<string, unknown>): boolean | OpenAiProblem {
  if (body.stream === undefined || body.stream === null) return false;
  return typeof body.stream === "boolean" ? body.stream : badRequest("stream must be a boolean", "stream");
}

/** What both APIs read alike: the session a request goes to (`model`, the header) and whether it streams. */
function routeAndStream(
  body: Record<string, unknown>,
  sessionHeader: string | string[] | undefined,
): { route: Exclude<ReturnType<typeof routeOf>, OpenAiProblem>; stream: boolean } | OpenAiProblem {
  const route = routeOf(body.model, sessionHeader);
  if (isProblem(route)) return route;
  const stream = streamFlag(body);
  if (isProblem(stream)) return stream;
  return { route, stream };
}

/** `POST /v1/chat/completions`: the newest `user` message of `messages` is the input. */
export function parseChatRequest(
  body: Record<string, unknown>,
  sessionHeader: string | string[] | undefined,
): OpenAiAsk | OpenAiProblem {
  const common = routeAndStream(body, sessionHeader);
  if (isProblem(common)) return common;
  const { route, stream } = common;
  if (!Array.isArray(body.messages)) return badRequest("messages must be an array of messages", "messages");
  const messages = body.messages as unknown[];
  let index = messages.length - 1;
  while (
    index >= 0 &&
    !(isObject(messages[index]) && (messages[index] as { role?: unknown }).role === "user")
  )
    index--;
  if (index < 0) return badRequest("messages holds no user message", "messages");
  const parts = partsOf((messages[index] as { content?: unknown }).content, ["text"], "image_url");
  if (!hasInput(parts)) {
    return badRequest(
      `messages[${index}] (the newest user message) has no text and no image`,
      `messages[${index}].content`,
    );
  }
  const options = body.stream_options;
  const includeUsage = isObject(options) && options.include_usage === true;
  return { ...parts, ...route, stream, includeUsage };
}

/** `POST /v1/responses`: `input` is the text, or items of which the newest `user` message is the input. */
export function parseResponsesRequest(
  body: Record<string, unknown>,
  sessionHeader: string | string[] | undefined,
): OpenAiAsk | OpenAiProblem {
  const common = routeAndStream(body, sessionHeader);
  if (isProblem(common)) return common;
  const { route, stream } = common;
  const input = body.input;
  let parts: Parts | undefined;
  let param = "input";
  if (typeof input === "string") parts = { text: input, images: [] };
  else if (Array.isArray(input)) {
    let index = input.length - 1;
    while (index >= 0 && !(isObject(input[index]) && (input[index] as { role?: unknown }).role === "user"))
      index--;
    if (index < 0) return badRequest("input holds no user message", "input");
    param = `input[${index}].content`;
    parts = partsOf((input[index] as { content?: unknown }).content, ["input_text", "text"], "input_image");
  } else return badRequest("input must be a string or an array of input items", "input");
  if (!hasInput(parts)) return badRequest("the newest user message has no text and no image", param);
  return { ...parts, ...route, stream, includeUsage: false };
}
