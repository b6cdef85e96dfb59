import { request } from "node:http";

/** A local gateway's answer: its status and its body, read whole as UTF-8 text. */
export interface LocalAnswer {
  status: number;
  text: string;
}

export interface LocalRequestOptions {
  method?: string;
  headers?: Record<string, string>;
  body?: string;
  /** How long the whole exchange may take, if not forever; then it is cancelled (`AbortSignal.timeout`). */
  timeoutMs?: number;
}

/**
 * One request of a command to the local gateway (`http://` only) over `node:http`, without keep-alive (the command
 * exits after it). Not the built-in `fetch`: that loads undici, 20-30 ms of a short command's start on this
 * machine (`clawdis status` is judged against `node -e 0`, docs/benchmarks.md).
 *
 * Contract, as `fetch` with `signal: AbortSignal.timeout(timeoutMs)`: rejects when no answer comes (the connection
 * fails: its system error, ECONNREFUSED…; `timeoutMs` passes before the answer's headers: the signal's
 * TimeoutError). Once the headers came it resolves: with the body, or with "" when the body broke off or the time
 * ran out while it came (as `fetch` followed by `text().catch(() => "")`).
 */
export function localRequest(url: string, options: LocalRequestOptions): Promise<LocalAnswer> {
  return new Promise((resolve, reject) => {
    const signal = options.timeoutMs === undefined ? undefined : AbortSignal.timeout(options.timeoutMs);
    const method = options.method ?? "GET";
    const headers = options.headers ?? {};
    let answered = false;
    // `agent: false`: a connection of its own, closed after the answer (Node's global agent keeps sockets alive).
    const req = request(url, { method, headers, agent: false, ...(signal ? { signal } : {}) }, (res) => {
      answered = true;
      let text = "";
      let ended = false;
      res.setEncoding("utf8");
      res.on("data", (part: string) => {
        text += part;
      });
      res.once("end", () => {
        ended = true;
        resolve({ status: res.statusCode ?? 0, text });
      });
      // A body that broke off (a reset, the time running out): the status, without the part of a body.
      res.once("close", () => {
        if (!ended) resolve({ status: res.statusCode ?? 0, text: "" });
      });
      res.on("error", () => {});
    });
    // Cancelled by the time running out: the signal's TimeoutError, as `fetch` rejects. Once the headers came,
    // the answer's "close" resolves instead.
    req.on("error", (error) => {
      if (!answered) reject(signal?.aborted ? signal.reason : error);
    });
    req.end(options.body);
  });
}
