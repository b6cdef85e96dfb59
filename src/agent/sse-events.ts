import type { PushedBody } from "./http-answer.js";

type Parser = typeof import("eventsource-parser");
let parserModule: Promise<Parser> | undefined;
let parserLoaded: Parser | undefined;

/**
 * `eventsource-parser`, loaded on first use (~4 ms of the event loop): with the model SDK (preloadModelSdk), not
 * on the gateway's way to listening.
 */
export function loadSseParser(): Promise<Parser> {
  parserModule ??= import("eventsource-parser").then((loaded) => {
    parserLoaded = loaded;
    return loaded;
  });
  return parserModule;
}

export interface SseEvent {
  event: string | null;
  data: string;
}

/** What `readSse` reads: the bytes of an answer, pushed when the body can (`each`), else iterated. */
export type SseBody = AsyncIterable<Uint8Array> & Partial<PushedBody>;

/**
 * Reads the events of a `text/event-stream` body, for a streamed completion read from the openai SDK's raw
 * response (llm-client.ts) instead of through its `Stream`, which joins every network chunk onto what it holds
 * into a new byte array and slices it again per event (docs/benchmarks.md). Parsed by `eventsource-parser` (the
 * EventSource format). `onEvent` is called synchronously for each event as its bytes arrive, with no promise per
 * event or per chunk when the body pushes its bytes (`each`: an answer of createHttpFetch); returning false stops
 * the read.
 *
 * Contract: lines end with "\n", "\r\n" or "\r", wherever the network cuts them (a character split in UTF-8 is
 * joined first); a line starting with ":" is a comment; `field: value` drops one space after the colon; `event`
 * names the event, `data` lines are joined with "\n"; an empty line ends the event, which is given when it had
 * data. What follows the last empty line is not an event. Resolves after the body's end, or once `onEvent`
 * returned false (then no further event is given and the body is not read on); rejects with the body's errors (an
 * abort, a connection reset) as they come, or with what `onEvent` threw (the body is not read on either).
 */
export async function readSse(
  body: SseBody,
  onEvent: (event: SseEvent) => boolean | undefined,
): Promise<void> {
  const { createParser } = parserLoaded ?? (await loadSseParser());
  const decoder = new TextDecoder();
  let stopped = false;
  let thrown: { error: unknown } | undefined;
  const parser = createParser({
    onEvent: (message) => {
      if (stopped) return;
      try {
        if (onEvent({ event: message.event ?? null, data: message.data }) === false) stopped = true;
      } catch (error) {
        stopped = true;
        thrown = { error };
      }
    },
  });
  let last = "";
  /** Feeds one piece; false once the read stops (what `onEvent` threw is thrown). */
  const feed = (chunk: Uint8Array): boolean => {
    const text = decoder.decode(chunk, { stream: true });
    if (text.length > 0) last = text;
    parser.feed(text);
    if (thrown) throw thrown.error;
    return !stopped;
  };
  if (body.each) {
    await body.each(feed);
  } else {
    for await (const chunk of body) if (!feed(chunk)) break;
  }
  if (stopped) return;
  const rest = decoder.decode();
  if (rest.length > 0) last = rest;
  parser.feed(rest);
  // The parser holds a "\r" last in what it was fed (it may be the first half of "\r\n"); at the end it is a line
  // end: fed as "\r\n", the same one line end.
  if (last.endsWith("\r")) parser.feed("\n");
  if (thrown) throw thrown.error;
}
