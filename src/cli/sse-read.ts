/** One server-sent event: `event` defaults to "message"; `data` lines are joined with "\n". */
export interface SseEvent {
  event: string;
  data: string;
}

/**
 * The events of a `text/event-stream` body, in order, as they arrive (the parts of the WHATWG rules a client of
 * the gateway needs: CRLF, LF or CR line ends, also split across chunks; `:` comments; one space after the colon
 * dropped; several `data:` lines joined; a blank line dispatches; an event without data is not dispatched; a
 * last event without its blank line is dropped). UTF-8 split across chunks is decoded correctly. A broken
 * connection rejects (the caller decides what that means); stopping early cancels the body.
 */
export async function* readSseEvents(body: ReadableStream<Uint8Array>): AsyncGenerator<SseEvent> {
  const decoder = new TextDecoder();
  const reader = body.getReader();
  let buffer = "";
  let event = "";
  let data: string[] = [];
  const line = (text: string): SseEvent | undefined => {
    if (text.length === 0) {
      const out = data.length > 0 ? { event: event || "message", data: data.join("\n") } : undefined;
      event = "";
      data = [];
      return out;
    }
    if (text.startsWith(":")) return undefined;
    const colon = text.indexOf(":");
    const field = colon < 0 ? text : text.slice(0, colon);
    let value = colon < 0 ? "" : text.slice(colon + 1);
    if (value.startsWith(" ")) value = value.slice(1);
    if (field === "event") event = value;
    else if (field === "data") data.push(value);
    return undefined;
  };
  try {
    for (;;) {
      const { done, value } = await reader.read();
      buffer += done ? decoder.decode() : decoder.decode(value, { stream: true });
      let start = 0;
      for (let i = 0; i < buffer.length; i++) {
        const c = buffer[i];
        if (c !== "\n" && c !== "\r") continue;
        // A CR at the very end may be the first half of a CRLF: wait for the next chunk (or the end).
        if (c === "\r" && i === buffer.length - 1 && !done) break;
        const out = line(buffer.slice(start, i));
        if (c === "\r" && buffer[i + 1] === "\n") i++;
        start = i + 1;
        if (out) yield out;
      }
      buffer = buffer.slice(start);
      if (done) return;
    }
  } finally {
    await reader.cancel().catch(() => {});
  }
}
