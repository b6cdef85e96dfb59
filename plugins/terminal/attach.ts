import { readSse } from "../../src/plugin-api/index.js";
import { gatewayFetch } from "./gateway-fetch.js";
import { LineWriter, unreachableLine } from "./stream-turn.js";
import { createStyle, formatToolCall, type Style, sanitize } from "./terminal-style.js";

export interface AttachOptions {
  baseUrl: string;
  token: string;
  output: NodeJS.WritableStream;
  isTTY: boolean;
  /** The session to watch; default the gateway's primary session. */
  session?: string;
  /** `text,textStreaming,…` (src/http/event-filter.ts); absent: everything. Lifecycle events always arrive. */
  filter?: string;
  /** Ends the watching (Ctrl+C); the gateway drops the subscription, the session never notices. */
  signal?: AbortSignal;
}

/** What the printer remembers between events: whether this turn's reply was already shown as it streamed. */
interface PrintState {
  streamed: boolean;
  showProcessing: boolean;
}

/**
 * Prints one event of the watched session. Pure but for `out`: tool calls as one dim line each, failed tool
 * results as one red line, reply text as it streams (or whole, when streaming is filtered out), the person's
 * messages as `› text`, notices and the end of a turn that did not end normally as dim lines.
 */
export function printEvent(
  name: string,
  d: Record<string, unknown>,
  out: LineWriter,
  style: Style,
  state: PrintState,
): void {
  const text = typeof d.text === "string" ? sanitize(d.text) : "";
  switch (name) {
    case "message":
      if (d.role === "user") {
        const from = typeof d.channel === "string" ? `${sanitize(d.channel)} ` : "";
        out.line(style.bold(`${from}› ${text}`));
      } else if (!state.streamed) {
        out.line(text);
      } else {
        out.newline();
      }
      state.streamed = false;
      return;
    case "delta":
      state.streamed = true;
      out.write(text);
      return;
    case "thinking":
      out.write(style.dim(text));
      return;
    case "tool-call":
      state.streamed = false;
      out.line(style.dim(formatToolCall(String(d.name ?? "tool"), String(d.arguments ?? ""))));
      return;
    case "tool-result":
      if (d.ok === false) {
        const first = sanitize(String(d.output ?? "")).split("\n")[0] ?? "";
        out.line(style.red(`✗ ${String(d.name ?? "tool")} failed${first ? `: ${first.slice(0, 160)}` : ""}`));
      }
      return;
    case "usage":
      out.line(
        style.dim(
          `(tokens: ${String(d.promptTokens)} in, ${String(d.completionTokens)} out; context ${String(d.contextTokens)}${d.estimated ? ", estimated" : ""})`,
        ),
      );
      return;
    case "file":
      out.line(style.dim(`📎 ${sanitize(String(d.path ?? ""))}`));
      return;
    case "processing":
      if (state.showProcessing) out.line(style.dim(`(${sanitize(String(d.state ?? ""))})`));
      return;
    case "notice":
      out.line(style.dim(text));
      return;
    case "turn-end":
      state.streamed = false;
      if (d.stopReason !== "end") out.line(style.dim(`(turn ended: ${String(d.stopReason)})`));
      out.newline();
      return;
    default:
      return;
  }
}

interface StatusBody {
  mainKey?: unknown;
}

/**
 * `clawdis chat --attach`: watches a session live through `GET /api/events?session=<key>&filter=<names>`, and
 * sends nothing (watch-only: the person types in their own chat). Several clients can watch one session; one that
 * goes away is dropped by the gateway and the session does not notice. Exit codes: 0 when stopped (`signal`),
 * 1 when the gateway is not there, refuses the token or goes away, 2 for a filter the gateway does not know.
 */
export async function runAttach(options: AttachOptions): Promise<number> {
  const baseUrl = options.baseUrl.replace(/\/+$/, "");
  const style = createStyle(options.isTTY);
  const out = new LineWriter(options.output);
  const headers = { authorization: `Bearer ${options.token}` };
  let session = options.session;
  try {
    if (session === undefined) {
      const res = await gatewayFetch(`${baseUrl}/api/status`, {
        headers,
        ...(options.signal ? { signal: options.signal } : {}),
      });
      if (res.status === 401) {
        out.line(`the gateway at ${baseUrl} refused the token: is it the one in <state>/gateway.token?`);
        return 1;
      }
      const body = (await res.json().catch(() => ({}))) as StatusBody;
      session = typeof body.mainKey === "string" ? body.mainKey : "main";
    }
  } catch {
    if (options.signal?.aborted) return 0;
    out.line(unreachableLine(baseUrl));
    return 1;
  }
  const query = new URLSearchParams({ session });
  if (options.filter !== undefined) query.set("filter", options.filter);
  let res: Response;
  try {
    res = await gatewayFetch(`${baseUrl}/api/events?${query}`, {
      headers: { ...headers, accept: "text/event-stream" },
      ...(options.signal ? { signal: options.signal } : {}),
    });
  } catch {
    if (options.signal?.aborted) return 0;
    out.line(unreachableLine(baseUrl));
    return 1;
  }
  if (!res.ok || !res.body) {
    const body = (await res.json().catch(() => ({}))) as { message?: unknown };
    const why = typeof body.message === "string" ? body.message : `HTTP ${res.status}`;
    if (res.status === 401) out.line(`the gateway at ${baseUrl} refused the token: ${why}`);
    else out.line(`cannot watch session ${session}: ${why}`);
    return res.status === 400 ? 2 : 1;
  }
  const names = options.filter?.split(",").map((n) => n.trim()) ?? [];
  const state: PrintState = { streamed: false, showProcessing: names.includes("processingState") };
  out.line(
    style.dim(
      `watching session ${session} (${options.filter ? `filter: ${options.filter}` : "everything"}); Ctrl+C to leave`,
    ),
  );
  try {
    for await (const event of readSse(res.body)) {
      let data: unknown;
      try {
        data = JSON.parse(event.data);
      } catch {
        continue;
      }
      const d = (typeof data === "object" && data !== null ? data : {}) as Record<string, unknown>;
      printEvent(event.event, d, out, style, state);
    }
  } catch {
    if (options.signal?.aborted) {
      out.newline();
      return 0;
    }
  }
  if (options.signal?.aborted) return 0;
  out.line(`the gateway at ${baseUrl} went away: start it again with \`clawdis gateway\``);
  return 1;
}
