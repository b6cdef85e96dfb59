/**
 * The events of a `text/event-stream` body, read as the openai SDK's `Stream` reads a streamed completion (its
 * `_iterSSEMessages`), without its copies: the SDK joins every network chunk onto what it holds into a new byte
 * array, slices it again per event, and decodes it line by line (~13 KB of garbage and ~40 µs of CPU per streamed
 * completion, measured in the gateway; docs/benchmarks.md). llm-client.ts reads the SDK's raw response with it.
 *
 * Contract (the SDK's, which follows the EventSource format): lines end with "\n", "\r\n" or "\r" (one split
 * between two network chunks, or a character split in UTF-8, is joined first); a line starting with ":" is a comment;
 * `field: value` drops one space after the colon; `event` names the event, `data` lines are joined with "\n"; other
 * fields are ignored; an empty line ends the event, which is yielded when it had an `event` or data. What follows
 * the last empty line is not an event (the SDK drops it too). Errors of the body (an abort, a connection reset)
 * are thrown as they come.
 */

export interface SseEvent {
  event: string | null;
  data: string;
}

const LF = 10;
const CR = 13;
const COLON = 58;
const SPACE = 32;

/** The index of the first "\r" or "\n" in `text` from `from`, or -1. */
function lineBreak(text: string, from: number): number {
  for (let i = from; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === LF || c === CR) return i;
  }
  return -1;
}

export async function* sseEvents(body: AsyncIterable<Uint8Array>): AsyncGenerator<SseEvent> {
  const decoder = new TextDecoder();
  let event: string | null = null;
  let data: string[] = [];
  /** Takes one line (without its break); returns the event an empty line ends. */
  const take = (line: string): SseEvent | undefined => {
    if (line.length === 0) {
      if (!event && data.length === 0) return undefined;
      const done = { event, data: data.join("\n") };
      event = null;
      data = [];
      return done;
    }
    if (line.charCodeAt(0) === COLON) return undefined;
    const colon = line.indexOf(":");
    const field = colon === -1 ? line : line.slice(0, colon);
    let value = colon === -1 ? "" : line.slice(colon + 1);
    if (value.charCodeAt(0) === SPACE) value = value.slice(1);
    if (field === "data") data.push(value);
    else if (field === "event") event = value;
    return undefined;
  };
  let rest = "";
  for await (const chunk of body) {
    rest += decoder.decode(chunk, { stream: true });
    let from = 0;
    for (;;) {
      const at = lineBreak(rest, from);
      if (at === -1) break;
      const cr = rest.charCodeAt(at) === CR;
      // A "\r" last in what arrived may be the first half of "\r\n": wait for the next chunk to tell.
      if (cr && at === rest.length - 1) break;
      const done = take(rest.slice(from, at));
      from = at + (cr && rest.charCodeAt(at + 1) === LF ? 2 : 1);
      if (done) yield done;
    }
    rest = from === 0 ? rest : rest.slice(from);
  }
  rest += decoder.decode();
  // A "\r" held back at the very end still ends its line.
  if (rest.charCodeAt(rest.length - 1) === CR) {
    const done = take(rest.slice(0, -1));
    if (done) yield done;
  }
}
