import type { IncomingMessage } from "node:http";
import { finished } from "node:stream";

/**
 * An answer body as `createHttpFetch` gives it: the bytes of the answer as they arrive, one async iteration of
 * the `node:http` response itself (no web stream around it). The openai SDK reads a body this way when it has
 * `Symbol.asyncIterator` (its `ReadableStreamToAsyncIterable`), and cancels it by ending an iteration. A streamed
 * completion is read pushed instead (`each`).
 */
export type AnswerBody = AsyncIterable<Uint8Array> & PushedBody;

/**
 * A body read pushed: `onChunk` is called synchronously with each piece as it arrives, with no promise per piece
 * (the streamed completion's way, sse-events.ts). It takes the body as an iteration does (at most one read).
 * Returning false stops the read: resolved at once, and the answer is not read on (destroyed when not complete, as
 * an iteration ended early). Resolves at the answer's end; rejects with what `onChunk` threw (the answer destroyed)
 * or with the body's own error, as the iteration throws it.
 */
export interface PushedBody {
  each(onChunk: (chunk: Uint8Array) => boolean | undefined): Promise<void>;
}

/**
 * The part of a standard `Response` that the openai SDK and llm-client use, over a `node:http` response: status,
 * headers, the body as an async iterable (`AnswerBody`) and `text` / `json` / `arrayBuffer`. On the per-message
 * path it spares a streamed completion a web `ReadableStream`, a `Response` and a reader promise per chunk:
 * 440-468 against 490-514 µs of CPU per streamed completion with a `Response` over a `ReadableStream` (the SDK
 * and the fake model server in one process, on this machine).
 *
 * Contract: the body is read at most once (`bodyUsed`; a second read rejects with a TypeError, as a Response's
 * does). It ends with the answer; it throws the error `failure()` gives for how it stopped: the AbortError when
 * our signal ended it, the connection's own error (ECONNRESET) when the server went away before the answer was
 * complete — never a clean end then (node:http errors the response then).
 */
export class HttpAnswer {
  readonly ok: boolean;
  readonly redirected = false;
  readonly type = "basic";
  private used = false;
  private readonly stream: AnswerBody | null;
  private built: Headers | undefined;

  constructor(
    readonly url: string,
    readonly status: number,
    readonly statusText: string,
    /** The headers, built on first read (a Bot API caller never reads them; the model client does). */
    private readonly headersOf: () => Headers,
    /** Undefined for an answer without a body (204, HEAD…): already read to its end. */
    res: IncomingMessage | undefined,
    /** The error the body ends with when it stops before the answer is complete. */
    failure: (error: Error) => Error,
  ) {
    this.ok = status >= 200 && status <= 299;
    this.stream = res ? answerBody(res, failure, () => this.take()) : null;
  }

  get headers(): Headers {
    this.built ??= this.headersOf();
    return this.built;
  }

  get body(): AnswerBody | null {
    return this.stream;
  }

  get bodyUsed(): boolean {
    return this.used;
  }

  async arrayBuffer(): Promise<ArrayBuffer> {
    const bytes = await this.bytes();
    return bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength) as ArrayBuffer;
  }

  async bytes(): Promise<Uint8Array> {
    if (!this.stream) {
      this.take();
      return new Uint8Array(0);
    }
    const parts: Uint8Array[] = [];
    for await (const part of this.stream) parts.push(part);
    return Buffer.concat(parts);
  }

  async text(): Promise<string> {
    return new TextDecoder().decode(await this.bytes());
  }

  async json(): Promise<unknown> {
    return JSON.parse(await this.text());
  }

  /** Marks the body read; throws when it was read already. */
  private take(): void {
    if (this.used) throw new TypeError("Body is unusable: Body has already been read");
    this.used = true;
  }
}

/**
 * The answer's bytes, one iteration at most (`take`). A connection that closes before the answer is complete makes
 * node:http error `res` with ECONNRESET ("aborted"), thrown here unless our signal ended it (`failure`). Ending an
 * iteration early — also one never started, as the SDK cancels a body it will not read before a retry — destroys
 * `res`: a cancelled answer is never read on, and its socket does not stay taken.
 */
function answerBody(res: IncomingMessage, failure: (error: Error) => Error, take: () => void): AnswerBody {
  return {
    [Symbol.asyncIterator](): AsyncIterator<Uint8Array> {
      take();
      const chunks = res[Symbol.asyncIterator]() as AsyncIterator<Buffer>;
      return {
        async next() {
          try {
            return await chunks.next();
          } catch (error) {
            throw failure(error instanceof Error ? error : new Error(String(error)));
          }
        },
        async return() {
          if (!res.complete) res.destroy();
          await chunks.return?.();
          return { done: true, value: undefined };
        },
      };
    },
    each(onChunk) {
      return new Promise<void>((resolve, reject) => {
        take(); // a second read rejects
        let settled = false;
        const stop = (error?: { error: unknown }) => {
          settled = true;
          res.off("data", onData);
          if (!res.complete) res.destroy();
          else res.resume();
          if (error) reject(error.error);
          else resolve();
        };
        const onData = (chunk: Buffer) => {
          if (settled) return;
          let more: boolean | undefined;
          try {
            more = onChunk(chunk);
          } catch (error) {
            stop({ error });
            return;
          }
          if (more === false) stop();
        };
        // `finished`: the end, the response's error, or a close before the end (premature close), as the
        // iteration sees them. Its listeners stay (an error after the end is not thrown as uncaught).
        finished(res, (error) => {
          if (settled) return;
          settled = true;
          res.off("data", onData);
          if (error) reject(failure(error));
          else resolve();
        });
        res.on("data", onData);
      });
    },
  };
}
