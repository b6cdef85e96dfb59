type Parser = typeof import("eventsource-parser");
let parserModule: Promise<Parser> | undefined;

/**
 * `eventsource-parser`, loaded on first use (~4 ms of the event loop): with the model SDK (preloadModelSdk), not
 * on the gateway's way to listening.
 */
export function loadSseParser(): Promise<Parser> {
  parserModule ??= import("eventsource-parser");
  return parserModule;
}

/**
 * The events of a `text/event-stream` body, for reading a streamed completion from the openai SDK's raw response
 * (llm-client.ts) instead of through its `Stream`, which joins every network chunk onto what it holds into a new
 * byte array and slices it again per event (~13 KB of garbage and ~40 µs of CPU per streamed completion, measured
 * in the gateway; docs/benchmarks.md). Parsed by `eventsource-parser` (the EventSource format).
 *
 * Contract: lines end with "\n", "\r\n" or "\r", wherever the network cuts them (a character split in UTF-8 is
 * joined first); a line starting with ":" is a comment; `field: value` drops one space after the colon; `event`
 * names the event, `data` lines are joined with "\n"; an empty line ends the event, which is yielded when it had
 * data. What follows the last empty line is not an event. Errors of the body (an abort, a connection reset) are
 * thrown as they come. Ending the iteration early ends the body's.
 */

export interface SseEvent {
  event: string | null;
  data: string;
}

export async function* sseEvents(body: AsyncIterable<Uint8Array>): AsyncGenerator<SseEvent> {
  const { createParser } = await loadSseParser();
  const decoder = new TextDecoder();
  let ready: SseEvent[] = [];
  const parser = createParser({
    onEvent: (message) => ready.push({ event: message.event ?? null, data: message.data }),
  });
  let last = "";
  for await (const chunk of body) {
    const text = decoder.decode(chunk, { stream: true });
    if (text.length > 0) last = text;
    parser.feed(text);
    if (ready.length === 0) continue;
    const events = ready;
    ready = [];
    for (const event of events) yield event;
  }
  const rest = decoder.decode();
  if (rest.length > 0) last = rest;
  parser.feed(rest);
  // The parser holds a "\r" last in what it was fed (it may be the first half of "\r\n"); at the end it is a line
  // end: fed as "\r\n", the same one line end.
  if (last.endsWith("\r")) parser.feed("\n");
  for (const event of ready) yield event;
}
