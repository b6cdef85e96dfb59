import { readSse } from "../../src/plugin-api/index.js";
import { gatewayFetch } from "./gateway-fetch.js";
import { MarkdownStream, renderMarkdown } from "./markdown-terminal.js";
import { formatToolCall, type Style, sanitize } from "./terminal-style.js";

/** Writes text and remembers whether the cursor is at the start of a line. */
export class LineWriter {
  private atLineStart = true;

  constructor(private readonly output: NodeJS.WritableStream) {}

  write(text: string): void {
    if (text.length === 0) return;
    this.output.write(text);
    this.atLineStart = text.endsWith("\n");
  }

  /** Ends the current line if something is on it. */
  newline(): void {
    if (!this.atLineStart) this.write("\n");
  }

  line(text: string): void {
    this.newline();
    this.write(`${text}\n`);
  }
}

interface DoneBody {
  payloads?: { text?: unknown }[];
  meta?: { stopReason?: unknown };
}

/** How a turn's HTTP exchange ended, for the loop: go on, or end the chat with this exit code. */
export type TurnEnd = { kind: "continue" } | { kind: "exit"; code: number };

export function unreachableLine(baseUrl: string): string {
  return `the gateway is not running at ${baseUrl}: start it with \`clawdis gateway\``;
}

function errorMessage(body: unknown, status: number): string {
  if (typeof body === "object" && body !== null) {
    const { message, error } = body as { message?: unknown; error?: unknown };
    if (typeof message === "string") return message;
    if (typeof error === "string") return error;
  }
  return `HTTP ${status}`;
}

/**
 * Prints the texts of a finished turn that the stream did not already show (command answers, notices).
 * `segments` are the streamed texts between tool calls; a payload equal to the last one or to all of them
 * together was already printed.
 */
function printDone(
  body: DoneBody,
  segments: string[],
  out: LineWriter,
  style: Style,
  markdown: boolean,
): void {
  const texts = (body.payloads ?? []).map((p) => (typeof p.text === "string" ? p.text : "")).filter((t) => t);
  const shown = new Set(
    [segments.at(-1) ?? "", segments.join(""), segments.join("\n"), segments.join("\n\n")].map((t) =>
      t.trim(),
    ),
  );
  for (const text of texts) {
    if (shown.has(sanitize(text).trim())) continue;
    out.line(markdown ? renderMarkdown(sanitize(text), style) : sanitize(text));
  }
  const reason = body.meta?.stopReason;
  if (texts.length === 0 && typeof reason === "string" && reason !== "end" && reason !== "command") {
    out.line(style.dim(`(turn ended: ${reason})`));
  }
  out.newline();
}

/**
 * Sends one message to `POST /api/agent` with `Accept: text/event-stream` and prints the turn as it happens:
 * reply text as it streams, each tool call as one dim line, failed tool results as one red line, and at `done`
 * whatever the stream did not show. With `markdown` (a terminal with colour) the reply is rendered as Markdown
 * line by line: a line is printed, styled, once it is complete (the rest of the last one at a tool call or the
 * end); without it, text is printed as it arrives, as it is. Never throws for gateway trouble: it prints one line and says what to do next
 * (a stream that breaks or ends without `done` ends the chat with 1: the gateway went away, the message is safe).
 */
export async function streamTurn(options: {
  baseUrl: string;
  token: string;
  body: Record<string, unknown>;
  out: LineWriter;
  style: Style;
  signal: AbortSignal;
  /** Render the reply's Markdown with ANSI styles (see markdown-terminal.ts); default false: raw text. */
  markdown?: boolean;
}): Promise<TurnEnd> {
  const { baseUrl, out, style, signal } = options;
  const markdown = options.markdown === true;
  let res: Response;
  try {
    res = await gatewayFetch(`${baseUrl}/api/agent`, {
      method: "POST",
      headers: {
        authorization: `Bearer ${options.token}`,
        "content-type": "application/json",
        accept: "text/event-stream",
      },
      body: JSON.stringify(options.body),
      signal,
    });
  } catch {
    if (signal.aborted) return { kind: "continue" };
    out.line(unreachableLine(baseUrl));
    return { kind: "exit", code: 1 };
  }

  if (!res.ok) {
    const body: unknown = await res.json().catch(() => undefined);
    if (res.status === 401) {
      out.line(`the gateway at ${baseUrl} refused the token: ${errorMessage(body, res.status)}`);
      return { kind: "exit", code: 1 };
    }
    if (res.status === 503) {
      out.line(`the gateway at ${baseUrl} is stopping: start it again with \`clawdis gateway\``);
      return { kind: "exit", code: 1 };
    }
    out.line(style.red(`error: ${errorMessage(body, res.status)}`));
    return { kind: "continue" };
  }

  const type = res.headers.get("content-type") ?? "";
  if (!type.startsWith("text/event-stream") || !res.body) {
    // A gateway that answers with the JSON body instead of a stream: print its payloads.
    const body = (await res.json().catch(() => ({}))) as DoneBody;
    printDone(body, [], out, style, markdown);
    return { kind: "continue" };
  }

  const segments: string[] = [];
  let segment = -1;
  const rendered = markdown ? new MarkdownStream((text) => out.write(text), style) : undefined;
  const flush = () => rendered?.flush();
  try {
    for await (const event of readSse(res.body)) {
      const data: unknown = JSON.parse(event.data);
      const d = (typeof data === "object" && data !== null ? data : {}) as Record<string, unknown>;
      if (event.event === "delta" && typeof d.text === "string") {
        const text = sanitize(d.text);
        if (segment < 0) segment = segments.push("") - 1;
        segments[segment] += text;
        if (rendered) rendered.push(text);
        else out.write(text);
      } else if (event.event === "tool-call") {
        segment = -1;
        flush();
        out.line(style.dim(formatToolCall(String(d.name ?? "tool"), String(d.arguments ?? ""))));
      } else if (event.event === "tool-result" && d.ok === false) {
        flush();
        const first = sanitize(String(d.output ?? "")).split("\n")[0] ?? "";
        out.line(style.red(`✗ ${String(d.name ?? "tool")} failed${first ? `: ${first.slice(0, 160)}` : ""}`));
      } else if (event.event === "done") {
        flush();
        const body = d as DoneBody;
        if (body.meta?.stopReason === "waiting") {
          await printApproval(options, out, style);
          return { kind: "continue" };
        }
        printDone(
          body,
          segments.filter((t) => t.trim()),
          out,
          style,
          markdown,
        );
        return { kind: "continue" };
      }
    }
  } catch {
    flush();
    if (signal.aborted) {
      out.line(style.dim("(stopped waiting for this reply)"));
      return { kind: "continue" };
    }
    out.line(style.red(wentAwayLine(baseUrl)));
    return { kind: "exit", code: 1 };
  }
  flush();
  out.line(style.red(wentAwayLine(baseUrl)));
  return { kind: "exit", code: 1 };
}

/** How long the chat looks for the prompt of a turn that waits for an approval (it is written just after). */
const APPROVAL_LOOK_MS = 3000;
const APPROVAL_LOOK_EVERY_MS = 100;

/**
 * A turn that waits for an approval (docs/tools.md): the prompt for this chat as `GET /api/status` lists it (it is
 * journaled just after the turn ends: looked for up to APPROVAL_LOOK_MS), and how to answer at the next line.
 */
async function printApproval(
  options: { baseUrl: string; token: string; body: Record<string, unknown>; signal: AbortSignal },
  out: LineWriter,
  style: Style,
): Promise<void> {
  const chatId = options.body.chatId;
  const deadline = Date.now() + APPROVAL_LOOK_MS;
  let what: string | undefined;
  while (what === undefined && Date.now() < deadline && !options.signal.aborted) {
    try {
      const res = await gatewayFetch(`${options.baseUrl}/api/status`, {
        headers: { authorization: `Bearer ${options.token}` },
        signal: options.signal,
      });
      const status = (await res.json()) as { approvals?: { chatId?: unknown; what?: unknown }[] };
      what = status.approvals?.find((a) => a.chatId === chatId && typeof a.what === "string")?.what as
        | string
        | undefined;
    } catch {
      break;
    }
    if (what === undefined) await new Promise((resolve) => setTimeout(resolve, APPROVAL_LOOK_EVERY_MS));
  }
  if (what !== undefined) out.line(`${style.bold("Approval needed:")} ${sanitize(what)}`);
  out.line(
    style.dim("Answer /approve, /approve always (bash: this exact command from now on) or /deny [reason]."),
  );
  out.newline();
}

/**
 * The stream broke or ended without `done` after the gateway accepted the message (it answers 200 only after
 * journaling it): the message is not lost, and the chat cannot go on without the gateway.
 */
export function wentAwayLine(baseUrl: string): string {
  return `the gateway at ${baseUrl} went away during the turn. Your message is safe in its journal and will be answered after the gateway restarts (\`clawdis gateway\`)`;
}
