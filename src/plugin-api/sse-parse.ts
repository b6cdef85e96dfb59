/** One server-sent event: `event` defaults to "message"; `data` lines are joined with "\n". */
export interface SseEvent {
  event: string;
  data: string;
  id?: string;
}

/**
 * An incremental parser of a `text/event-stream` body, following the WHATWG rules that matter to a client:
 * lines end in CRLF, LF or CR (also when a chunk splits a CRLF); `:` starts a comment; one space after the
 * field's colon is dropped; several `data:` lines join with "\n"; a blank line dispatches; an event without
 * data is not dispatched; a leading BOM is skipped; `retry` and unknown fields are ignored.
 * A last event with no blank line after it is dropped at `end()`, as a browser drops it.
 */
export class SseParser {
  private buffer = "";
  private started = false;
  private event = "";
  private data: string[] = [];
  private id: string | undefined;

  /** Feeds decoded text; returns the events it completed. */
  push(chunk: string): SseEvent[] {
    let text = this.buffer + chunk;
    if (!this.started && text.length > 0) {
      this.started = true;
      if (text.startsWith("\uFEFF")) text = text.slice(1);
    }
    const events: SseEvent[] = [];
    let start = 0;
    for (let i = 0; i < text.length; i++) {
      const c = text[i];
      if (c !== "\n" && c !== "\r") continue;
      // A CR at the very end may be the first half of a CRLF: wait for the next chunk.
      if (c === "\r" && i === text.length - 1) break;
      this.line(text.slice(start, i), events);
      if (c === "\r" && text[i + 1] === "\n") i++;
      start = i + 1;
    }
    this.buffer = text.slice(start);
    return events;
  }

  /** The stream ended: an unterminated event is discarded. */
  end(): SseEvent[] {
    const events: SseEvent[] = [];
    if (this.buffer.endsWith("\r")) this.line(this.buffer.slice(0, -1), events);
    this.buffer = "";
    this.event = "";
    this.data = [];
    return events;
  }

  private line(line: string, events: SseEvent[]): void {
    if (line.length === 0) {
      if (this.data.length > 0) {
        events.push({
          event: this.event || "message",
          data: this.data.join("\n"),
          ...(this.id === undefined ? {} : { id: this.id }),
        });
      }
      this.event = "";
      this.data = [];
      return;
    }
    if (line.startsWith(":")) return;
    const colon = line.indexOf(":");
    const field = colon < 0 ? line : line.slice(0, colon);
    let value = colon < 0 ? "" : line.slice(colon + 1);
    if (value.startsWith(" ")) value = value.slice(1);
    if (field === "event") this.event = value;
    else if (field === "data") this.data.push(value);
    else if (field === "id" && !value.includes("\0")) this.id = value;
  }
}

/**
 * The events of a response body, in order, as they arrive: a web `ReadableStream` (a `fetch` answer's body) or the
 * body's bytes as an async iterable (a `node:http` response). UTF-8 split across chunks is handled. Both are read
 * as async iterables: stopping early (a `break` in the consumer) ends the iteration, which cancels a web stream and
 * destroys a `node:http` response, closing the connection.
 */
export async function* readSse(
  body: ReadableStream<Uint8Array> | AsyncIterable<Uint8Array>,
): AsyncGenerator<SseEvent> {
  const parser = new SseParser();
  const decoder = new TextDecoder();
  // Node's web streams are async iterables (the DOM types used here do not say so).
  for await (const value of body as AsyncIterable<Uint8Array>) {
    yield* parser.push(decoder.decode(value, { stream: true }));
  }
  yield* parser.push(decoder.decode());
  yield* parser.end();
}
