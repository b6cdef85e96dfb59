import { existsSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { Worker } from "node:worker_threads";
import { abortError, eachHeader } from "../../agent/http-fetch.js";
import type { Logger } from "../../core/logger.js";
import type { FromSendThread, SendThreadData, ToSendThread } from "./send-thread-protocol.js";

const WORKER_FILE = "send-thread-worker.js";

/** The compiled worker: beside this module (tsc's output), else under the package's `dist/` (the bundle). */
export function sendThreadWorkerFile(from = fileURLToPath(import.meta.url)): string | undefined {
  const beside = join(dirname(from), WORKER_FILE);
  if (from.endsWith(".js") && existsSync(beside)) return beside;
  for (let dir = dirname(from); ; dir = dirname(dir)) {
    const file = join(dir, "dist", "src", "runtime", "send-thread", WORKER_FILE);
    if (existsSync(file)) return file;
    if (dirname(dir) === dir) return undefined;
  }
}

/** A send the thread made: its answer, and whether the chat app took it (then its lines are in the file). */
export interface ThreadAnswer {
  answer: Response;
  taken: boolean;
  /** Tell the thread (`recorded(seq)`) once the main thread's own record of the delivery is written. */
  seq: number;
}

interface Waiting {
  resolve: (answer: ThreadAnswer) => void;
  reject: (error: Error) => void;
}

const NULL_BODY_STATUSES = new Set([101, 204, 205, 304]);
/** How long the thread may take to start (it takes about 30 ms) before the start gives it up. */
export const START_DEADLINE_MS = 5_000;

/**
 * The main thread's side of the send thread (send-thread-worker.ts has what it does and why).
 *
 * Contract:
 * - `ready` resolves true once the thread runs, false when it cannot start (no compiled worker, a failed start, no
 *   start within `startDeadlineMs`: logged); it never rejects. `up` is whether requests go to it now; after it stopped or failed, false for good,
 *   and every request waiting on it rejects (a network-like error: the caller's send is tried again).
 * - `fetch` makes one request (string or byte body) on the thread: resolves with the answer, read whole, as a
 *   `Response`; an aborted `signal` rejects it with the AbortError at once, and the thread drops the request.
 * - `close` ends the thread; the confirmations file stays as it is for the next start.
 */
export class SendThread {
  readonly ready: Promise<boolean>;
  private worker: Worker | undefined;
  private running = false;
  private seq = 0;
  private readonly waiting = new Map<number, Waiting>();
  /** Set by `close` (and a start given up): the worker's exit is then no failure to report. */
  private closing = false;
  /** Whether the last taken answer's lines could not be written (a warning is logged once per such run). */
  private writeFailing = false;

  constructor(options: {
    confirmationsPath: string;
    logger: Logger;
    workerFile?: string | undefined;
    /** How long the thread may take to run before it is given up (default START_DEADLINE_MS). */
    startDeadlineMs?: number;
  }) {
    const file = "workerFile" in options ? options.workerFile : sendThreadWorkerFile();
    if (file === undefined) {
      options.logger.warn(
        "the send thread's compiled file is missing: replies are sent from the main thread",
      );
      this.ready = Promise.resolve(false);
      return;
    }
    const data: SendThreadData = { confirmationsPath: options.confirmationsPath };
    const worker = new Worker(file, { workerData: data });
    this.worker = worker;
    worker.unref();
    this.ready = new Promise<boolean>((resolve) => {
      worker.on("message", (message: FromSendThread) => {
        if (message.type === "ready") {
          this.running = true;
          resolve(true);
        } else this.settle(message, options.logger);
      });
      const down = (why: string) => {
        const wasRunning = this.running;
        this.running = false;
        this.worker = undefined;
        resolve(false);
        for (const [, waiting] of this.waiting) waiting.reject(new Error(`the send thread stopped: ${why}`));
        this.waiting.clear();
        // A stop the gateway asked for (`close`, every shutdown) is no warning; any other is.
        if (why !== "closed") options.logger.warn("the send thread stopped", { why, wasRunning });
      };
      worker.once("error", (error) => down(error.message));
      worker.once("exit", (code) => down(this.closing ? "closed" : `exit code ${code}`));
      // A thread that never comes up must not hold the start's first sends for ever: given up, they go from the
      // main thread.
      const deadline = options.startDeadlineMs ?? START_DEADLINE_MS;
      setTimeout(() => {
        if (this.running || this.worker !== worker) return;
        options.logger.warn("the send thread did not start in time: replies are sent from the main thread", {
          afterMs: deadline,
        });
        this.closing = true;
        resolve(false);
        void worker.terminate();
      }, deadline).unref();
    });
  }

  get up(): boolean {
    return this.running;
  }

  fetch(href: string, init: RequestInit, takenStatus: number, lines: string): Promise<ThreadAnswer> {
    const worker = this.worker;
    const signal = init.signal ?? undefined;
    if (!worker || !this.running) return Promise.reject(new Error("the send thread is not running"));
    if (signal?.aborted) return Promise.reject(abortError(signal));
    const body = init.body;
    if (!(body === undefined || body === null || typeof body === "string" || body instanceof Uint8Array)) {
      return Promise.reject(new TypeError("the send thread takes string and byte bodies only"));
    }
    const seq = ++this.seq;
    const headers: [string, string][] = [];
    eachHeader(init.headers, (name, value) => headers.push([name, value]));
    const message: ToSendThread = {
      type: "send",
      seq,
      url: href,
      method: init.method ?? "GET",
      headers,
      body: body ?? undefined,
      takenStatus,
      lines,
    };
    return new Promise<ThreadAnswer>((resolve, reject) => {
      const onAbort = () => {
        if (!this.waiting.delete(seq)) return;
        this.worker?.postMessage({ type: "abort", seq } satisfies ToSendThread);
        reject(abortError(signal as AbortSignal));
      };
      signal?.addEventListener("abort", onAbort, { once: true });
      this.waiting.set(seq, {
        resolve: (answer) => {
          signal?.removeEventListener("abort", onAbort);
          resolve(answer);
        },
        reject: (error) => {
          signal?.removeEventListener("abort", onAbort);
          reject(error);
        },
      });
      worker.postMessage(message);
    });
  }

  /** The main thread's own record of request `seq`'s delivery is written. */
  recorded(seq: number): void {
    this.worker?.postMessage({ type: "recorded", seq } satisfies ToSendThread);
  }

  async close(): Promise<void> {
    const worker = this.worker;
    if (!worker) return;
    this.closing = true;
    await worker.terminate();
  }

  private settle(message: Exclude<FromSendThread, { type: "ready" }>, logger: Logger): void {
    const waiting = this.waiting.get(message.seq);
    this.waiting.delete(message.seq);
    if (message.type === "failed") {
      const error = Object.assign(new Error(message.message), message.code ? { code: message.code } : {});
      error.name = message.name;
      waiting?.reject(error);
      return;
    }
    // Logged once while appends keep failing (a full disk), again after one went through.
    if (message.writeError && !this.writeFailing) {
      logger.warn("could not write a delivery's confirmation; its record is written by the main thread", {
        error: message.writeError,
      });
    }
    if (message.taken) this.writeFailing = message.writeError !== undefined;
    const answer = new Response(NULL_BODY_STATUSES.has(message.status) ? null : message.body, {
      status: message.status,
      statusText: message.statusText,
      headers: message.headers,
    });
    waiting?.resolve({ answer, taken: message.taken, seq: message.seq });
  }
}
