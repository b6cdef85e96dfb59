import type { StoredChatMessage } from "../sessions/types.js";

/**
 * The bytes of a Chat Completions request, built here instead of by the SDK's `JSON.stringify` of the whole
 * request (llm-client.ts hands them to the SDK as its `body` option).
 *
 * Contract: the bytes parse to `{ messages: messages.map(convertMessage), ...params }`, whatever was sent before.
 * A warm session's next request repeats its last one's messages and adds a few: the last request's bytes are kept
 * per context (keyed by its first message after the system prompt, the oldest of the session's tail: kept while
 * that object lives, collected with it; from the context's second request on), and the leading messages that are
 * still the same (the same object, or one with the same fields) are copied from them as bytes; only the rest is
 * encoded. The result is one UTF-8 buffer:
 * no whole-request string is built, measured and then joined to the header block on its way to the socket.
 */

interface Encoded {
  /** The messages the bytes hold (this module's own array: the caller's grows during the turn). */
  messages: StoredChatMessage[];
  bytes: Buffer;
  /** Where each message's JSON ends in `bytes`, parallel to `messages`. */
  ends: number[];
}

const lastRequest = new WeakMap<StoredChatMessage, Encoded>();
/**
 * Contexts sent once, with nothing kept: only a context sent again (its session's tail is warm and hands the same
 * objects to each turn) keeps its bytes. A session touched once (its context read from disk, dropped after the
 * turn) then leaves no buffer behind: 10,000 of them left the gateway ~4 MB larger after the burst.
 */
const sentOnce = new WeakSet<StoredChatMessage>();

const HEAD = '{"messages":[';
const NON_ASCII = /[\u0080-\uffff]/;

/** Bytes of `text` in UTF-8 (its length when it is all ASCII, as most JSON is: no call into the runtime). */
function utf8Length(text: string): number {
  return NON_ASCII.test(text) ? Buffer.byteLength(text, "utf8") : text.length;
}

/** Whether two messages encode to the same JSON (`convertMessage` reads only these fields). */
function sameMessage(a: StoredChatMessage, b: StoredChatMessage): boolean {
  return (
    a === b ||
    (a.role === b.role &&
      a.content === b.content &&
      a.name === b.name &&
      a.tool_call_id === b.tool_call_id &&
      a.tool_calls === b.tool_calls)
  );
}

/** The request's bytes: `params` (any fields but `messages`) with `messages` converted, as JSON in UTF-8. */
export function chatRequestBody(
  params: Record<string, unknown>,
  messages: readonly StoredChatMessage[],
): Buffer {
  const key = messages[1] ?? messages[0];
  const last = key ? lastRequest.get(key) : undefined;
  let same = 0;
  if (last) {
    const n = Math.min(last.messages.length, messages.length);
    while (same < n && sameMessage(last.messages[same]!, messages[same]!)) same++;
  }
  const reused = last && same > 0 ? last.bytes.subarray(HEAD.length, last.ends[same - 1]) : undefined;
  const fresh = new Array<string>(messages.length - same);
  for (let i = same; i < messages.length; i++) fresh[i - same] = JSON.stringify(convertMessage(messages[i]!));
  // A context that only grew extends the last request's arrays (they are this module's own); else new ones.
  const grew = last !== undefined && same === last.messages.length;
  const kept = grew ? last.messages : messages.slice(0, same);
  const ends = grew ? last.ends : (last?.ends.slice(0, same) ?? []);
  let at = reused ? HEAD.length + reused.length : HEAD.length;
  for (let i = 0; i < fresh.length; i++) {
    if (i > 0 || reused) at += 1; // the comma before it
    at += utf8Length(fresh[i]!);
    kept.push(messages[same + i]!);
    ends.push(at);
  }
  const rest = JSON.stringify(params);
  // `rest` is an object's JSON: "{}" adds nothing, else its fields follow the messages.
  const tail = rest === "{}" ? "]}" : `],${rest.slice(1)}`;
  // Its own memory, every byte written below: a kept body holds no slice of Node's shared pool of small buffers.
  const bytes = Buffer.allocUnsafeSlow(at + utf8Length(tail));
  let written = bytes.write(HEAD, 0, "latin1");
  if (reused) {
    written += reused.copy(bytes, written);
    if (fresh.length > 0) written += bytes.write(",", written, "latin1");
  }
  written += bytes.write(fresh.join(","), written, "utf8");
  bytes.write(tail, written, "utf8");
  if (key && (last !== undefined || sentOnce.has(key))) lastRequest.set(key, { messages: kept, bytes, ends });
  else if (key) sentOnce.add(key);
  return bytes;
}

/** OpenAI accepts a message `name` only in this shape; others (display names) are left out rather than sent. */
const VALID_NAME = /^[A-Za-z0-9_-]{1,64}$/;

/**
 * A message as the Chat Completions API takes it (`ChatCompletionMessageParam`, written out here: only the llm
 * client imports the SDK, test/architecture.test.ts).
 */
export type WireMessage =
  | { role: "system"; content: string }
  | { role: "user"; content: string; name?: string }
  | {
      role: "assistant";
      content: string | null;
      tool_calls?: { id: string; type: "function"; function: { name: string; arguments: string } }[];
    }
  | { role: "tool"; content: string; tool_call_id: string };

/** A stored message in the Chat Completions shape. Pure. */
export function convertMessage(message: StoredChatMessage): WireMessage {
  const content = message.content ?? "";
  switch (message.role) {
    case "system":
      return { role: "system", content };
    case "user":
      return message.name && VALID_NAME.test(message.name)
        ? { role: "user", content, name: message.name }
        : { role: "user", content };
    case "assistant": {
      const calls = message.tool_calls ?? [];
      if (calls.length === 0) return { role: "assistant", content };
      return {
        role: "assistant",
        content: message.content,
        tool_calls: calls.map((call) => ({
          id: call.id,
          type: "function" as const,
          function: { name: call.function.name, arguments: call.function.arguments },
        })),
      };
    }
    case "tool":
      return { role: "tool", content, tool_call_id: message.tool_call_id ?? "" };
  }
}
