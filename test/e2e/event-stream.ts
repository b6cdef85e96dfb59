/** One server-sent event: its name and its JSON data. */
export interface StreamEvent {
  type: string;
  data: Record<string, unknown>;
}

/** A request that was answered with something other than an event stream (e.g. 409, 503). */
export class NotAStreamError extends Error {
  constructor(
    readonly status: number,
    readonly body: string,
  ) {
    super(`answered ${status} instead of an event stream: ${body.slice(0, 300)}`);
  }
}

/**
 * A client of `GET /api/events` and of `POST /api/agent` with `Accept: text/event-stream` (server-sent events).
 * `open` resolves once the response headers arrived, and the gateway subscribes before it sends them: from then
 * on no event is missed. Every event is kept in `events`; `ended` resolves when the stream is over (closed by the
 * gateway, by `close()`, or broken because the process died).
 */
export class EventStream {
  readonly events: StreamEvent[] = [];
  readonly ended: Promise<void>;
  private readonly controller = new AbortController();
  private readonly waiters = new Set<() => void>();
  private closed = false;
  private markEnded: () => void = () => {};

  private constructor() {
    this.ended = new Promise((resolve) => {
      this.markEnded = resolve;
    });
  }

  static async open(baseUrl: string, token: string, session?: string): Promise<EventStream> {
    const query = session ? `?session=${encodeURIComponent(session)}` : "";
    return EventStream.connect(`${baseUrl}/api/events${query}`, {
      headers: { authorization: `Bearer ${token}`, accept: "text/event-stream" },
    });
  }

  /**
   * `POST /api/agent` as a stream: `accepted` `{journalId, sessionKey}` first (the acknowledgement), `done` last.
   * An answer that is not a stream (400, 409, 503, …) rejects with a NotAStreamError.
   */
  static postAgent(baseUrl: string, token: string, body: Record<string, unknown>): Promise<EventStream> {
    return EventStream.connect(`${baseUrl}/api/agent`, {
      method: "POST",
      headers: {
        authorization: `Bearer ${token}`,
        accept: "text/event-stream",
        "content-type": "application/json",
      },
      body: JSON.stringify(body),
    });
  }

  private static async connect(url: string, init: RequestInit): Promise<EventStream> {
    const stream = new EventStream();
    const res = await fetch(url, { ...init, signal: stream.controller.signal });
    const type = res.headers.get("content-type") ?? "";
    if (!res.ok || !res.body || !type.includes("text/event-stream")) {
      const text = await res.text().catch(() => "");
      throw new NotAStreamError(res.status, text);
    }
    void stream.read(res.body);
    return stream;
  }

  /** Whether the stream is over. */
  get isClosed(): boolean {
    return this.closed;
  }

  /** Resolves with the first event (already received or later) for which `predicate` holds. */
  waitFor(
    predicate: (event: StreamEvent) => boolean,
    what: string,
    timeoutMs = 15_000,
  ): Promise<StreamEvent> {
    return new Promise((resolve, reject) => {
      const check = (): boolean => {
        const found = this.events.find(predicate);
        if (found) {
          done();
          resolve(found);
          return true;
        }
        if (this.closed) {
          done();
          reject(new Error(`the event stream closed before ${what}; events: ${this.describe()}`));
          return true;
        }
        return false;
      };
      const timer = setTimeout(() => {
        done();
        reject(new Error(`no event ${what} within ${timeoutMs} ms; events: ${this.describe()}`));
      }, timeoutMs);
      const waiter = () => {
        check();
      };
      const done = () => {
        clearTimeout(timer);
        this.waiters.delete(waiter);
      };
      if (!check()) this.waiters.add(waiter);
    });
  }

  close(): void {
    this.controller.abort();
  }

  describe(): string {
    return JSON.stringify(
      this.events.map((e) => [e.type, e.data.role ?? e.data.stopReason ?? "", e.data.text ?? ""]),
    );
  }

  private async read(body: ReadableStream<Uint8Array>): Promise<void> {
    const decoder = new TextDecoder();
    let buffer = "";
    const reader = body.getReader();
    try {
      for (;;) {
        const { done, value } = await reader.read();
        if (done) break;
        buffer += decoder.decode(value, { stream: true });
        for (let cut = buffer.indexOf("\n\n"); cut >= 0; cut = buffer.indexOf("\n\n")) {
          this.parse(buffer.slice(0, cut));
          buffer = buffer.slice(cut + 2);
        }
      }
    } catch {
      // Closed by us or by the gateway: either way the stream is over.
    } finally {
      this.closed = true;
      this.wake();
      this.markEnded();
    }
  }

  private parse(block: string): void {
    let type = "message";
    const data: string[] = [];
    for (const line of block.split("\n")) {
      if (line.startsWith("event:")) type = line.slice(6).trim();
      else if (line.startsWith("data:")) data.push(line.slice(5).replace(/^ /, ""));
    }
    if (data.length === 0) return;
    try {
      this.events.push({ type, data: JSON.parse(data.join("\n")) as Record<string, unknown> });
    } catch {
      this.events.push({ type, data: { raw: data.join("\n") } });
    }
    this.wake();
  }

  private wake(): void {
    for (const waiter of [...this.waiters]) waiter();
  }
}
