/**
 * The send thread (send-thread.ts starts it): HTTP requests whose answer says the chat app took a message, made
 * away from the main thread's event loop. The moment an answer has the request's `takenStatus` (its status line
 * and headers read, before its body), the request's journal lines are appended to the confirmations file, and
 * only then is the answer handed to the main thread. A kill -9 after the chat app answered therefore finds the
 * delivery recorded even when the main thread was busy and had not read the answer yet (issue 30): this thread
 * runs nothing else, so it reads the answer about as soon as it arrives.
 *
 * Contract:
 * - Only Node's own modules and wire-headers.ts (which needs none else): this file runs as tsc compiled it
 *   (dist/src/runtime/send-thread/), outside the bundle.
 * - The confirmations file is this thread's alone while it runs (opened for appending). Lines from before it
 *   started (what a previous run left, if the journal's open did not take it in) are never removed; lines it
 *   appended go once the main thread says its own record of each is written (`recorded`), and the file has grown
 *   by CONFIRMATIONS_KEPT_BYTES: it is cut back to the size it had when the thread started.
 * - A line that cannot be appended (a full disk) is reported with the answer, which is handed over all the same.
 */
import { constants, fstatSync, ftruncateSync, openSync, writeSync } from "node:fs";
import {
  type ClientRequest,
  Agent as HttpAgent,
  request as httpRequest,
  type IncomingMessage,
} from "node:http";
import { Agent as HttpsAgent, request as httpsRequest } from "node:https";
import { urlToHttpOptions } from "node:url";
import { parentPort, workerData } from "node:worker_threads";
import { wireHeaders } from "../../agent/wire-headers.js";
import type { FromSendThread, SendThreadData, ToSendThread } from "./send-thread-protocol.js";

/** Appended lines that are all recorded elsewhere are cut once the file has grown by this much. */
const CONFIRMATIONS_KEPT_BYTES = 64 * 1024;

const port = parentPort;
if (!port) throw new Error("send-thread-worker runs as a worker thread");
const { confirmationsPath } = workerData as SendThreadData;

// Non-blocking: a FIFO put at the path fails the start at once (no reader) instead of holding it.
const fd = openSync(
  confirmationsPath,
  constants.O_WRONLY | constants.O_APPEND | constants.O_CREAT | constants.O_NONBLOCK,
  0o600,
);
const base = fstatSync(fd).size;
let size = base;
/** Requests whose lines were appended and whose record the main thread has not written yet. */
const unrecorded = new Set<number>();
const requests = new Map<number, ClientRequest>();
const agents = { "http:": new HttpAgent({ keepAlive: true }), "https:": new HttpsAgent({ keepAlive: true }) };

function post(message: FromSendThread, transfer: ArrayBuffer[] = []): void {
  port?.postMessage(message, transfer);
}

function append(seq: number, lines: string): string | undefined {
  const bytes = Buffer.from(lines);
  try {
    for (let at = 0; at < bytes.length; ) at += writeSync(fd, bytes, at, bytes.length - at);
  } catch (error) {
    return error instanceof Error ? error.message : String(error);
  }
  size += bytes.length;
  unrecorded.add(seq);
  return undefined;
}

function recorded(seq: number): void {
  unrecorded.delete(seq);
  if (unrecorded.size > 0 || size - base < CONFIRMATIONS_KEPT_BYTES) return;
  try {
    ftruncateSync(fd, base);
    size = base;
  } catch {
    // Kept: the lines are only redundant, and the next start takes the file in.
  }
}

function send(message: Extract<ToSendThread, { type: "send" }>): void {
  const url = new URL(message.url);
  const headers = wireHeaders(
    url,
    (each) => {
      for (const [name, value] of message.headers) each(name, value);
    },
    message.body,
  );
  const https = url.protocol === "https:";
  const fail = (error: Error & { code?: string }) => {
    if (!requests.delete(message.seq)) return;
    post({
      type: "failed",
      seq: message.seq,
      name: error.name,
      message: error.message,
      ...(error.code ? { code: error.code } : {}),
    });
  };
  const req = (https ? httpsRequest : httpRequest)(
    {
      ...urlToHttpOptions(url),
      method: message.method,
      headers,
      agent: https ? agents["https:"] : agents["http:"],
    },
    (res: IncomingMessage) => {
      const status = res.statusCode ?? 0;
      const taken = status === message.takenStatus;
      // Before anything else: from here on a crash must not send this message again.
      const writeError = taken ? append(message.seq, message.lines) : undefined;
      const chunks: Buffer[] = [];
      res.on("data", (chunk: Buffer) => chunks.push(chunk));
      res.once("error", fail);
      res.once("end", () => {
        if (!requests.delete(message.seq)) return;
        const body = Buffer.concat(chunks);
        const pairs: [string, string][] = [];
        for (let i = 0; i + 1 < res.rawHeaders.length; i += 2)
          pairs.push([res.rawHeaders[i]!, res.rawHeaders[i + 1]!]);
        // A copy of its own (a small Buffer is a view of a shared pool), moved to the main thread, not cloned.
        const bytes = new Uint8Array(body.byteLength);
        bytes.set(body);
        post(
          {
            type: "answer",
            seq: message.seq,
            status,
            statusText: res.statusMessage ?? "",
            headers: pairs,
            body: bytes,
            taken,
            ...(writeError ? { writeError } : {}),
          },
          [bytes.buffer],
        );
      });
    },
  );
  requests.set(message.seq, req);
  req.once("error", fail);
  req.end(message.body);
}

port.on("message", (message: ToSendThread) => {
  if (message.type === "send") send(message);
  else if (message.type === "abort") {
    const req = requests.get(message.seq);
    requests.delete(message.seq);
    req?.destroy();
  } else recorded(message.seq);
});
post({ type: "ready" });
