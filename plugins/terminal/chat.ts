import { randomUUID } from "node:crypto";
import { createInterface } from "node:readline";
import { runAttach } from "./attach.js";
import { gatewayFetch } from "./gateway-fetch.js";
import { LineWriter, streamTurn, unreachableLine } from "./stream-turn.js";
import { createStyle } from "./terminal-style.js";

export interface TerminalChatOptions {
  /** The gateway, e.g. `http://127.0.0.1:18789`. */
  baseUrl: string;
  token: string;
  input: NodeJS.ReadableStream;
  output: NodeJS.WritableStream;
  /** A person at a terminal: prompt, line editing and Ctrl+C handling. Otherwise plain lines. */
  isTTY: boolean;
  /**
   * ANSI styles: dim tool lines, and the reply's Markdown rendered (bold, code, lists, headings). Default `isTTY`;
   * the CLI passes false when `NO_COLOR` is set. Without it replies print as they arrive, raw.
   */
  color?: boolean;
  /** Identifies this chat in events and transcripts; default a new `terminal-<id>` per run. */
  chatId?: string;
  /** `--attach`: watch a session live instead of chatting (nothing is sent); see `runAttach`. */
  attach?: { session?: string; filter?: string };
}

const QUIT = new Set(["/quit", "/exit"]);

interface StatusBody {
  mainKey?: unknown;
  model?: { model?: unknown };
}

/** `GET /api/status`: the gateway is there and takes the token. Prints one line and gives an exit code if not. */
async function checkGateway(baseUrl: string, token: string, out: LineWriter): Promise<StatusBody | number> {
  let res: Response;
  try {
    res = await gatewayFetch(`${baseUrl}/api/status`, { headers: { authorization: `Bearer ${token}` } });
  } catch {
    out.line(unreachableLine(baseUrl));
    return 1;
  }
  if (res.status === 401) {
    out.line(`the gateway at ${baseUrl} refused the token: is it the one in <state>/gateway.token?`);
    return 1;
  }
  return ((await res.json().catch(() => ({}))) ?? {}) as StatusBody;
}

/**
 * `clawdis chat`: an interactive chat with the primary session through the running gateway.
 * Each line is one message (`POST /api/agent`, streamed); the reply prints as it arrives. `/quit`, `/exit`
 * or end of input ends with 0; a gateway that is not there or refuses the token ends with 1.
 * At a terminal, Ctrl+C during a reply sends `/stop` (the turn really stops); at the prompt it quits.
 */
export async function runTerminalChat(options: TerminalChatOptions): Promise<number> {
  if (options.attach) {
    // Ctrl+C (or SIGTERM) ends the watching with 0; the gateway drops the subscription.
    const controller = new AbortController();
    const stop = () => controller.abort();
    process.once("SIGINT", stop);
    process.once("SIGTERM", stop);
    try {
      return await runAttach({
        baseUrl: options.baseUrl,
        token: options.token,
        output: options.output,
        isTTY: options.isTTY,
        ...options.attach,
        signal: controller.signal,
      });
    } finally {
      process.off("SIGINT", stop);
      process.off("SIGTERM", stop);
    }
  }
  const baseUrl = options.baseUrl.replace(/\/+$/, "");
  const chatId = options.chatId ?? `terminal-${randomUUID().slice(0, 8)}`;
  const color = options.color ?? options.isTTY;
  const style = createStyle(color);
  const out = new LineWriter(options.output);

  const status = await checkGateway(baseUrl, options.token, out);
  if (typeof status === "number") return status;
  if (options.isTTY) {
    const session = typeof status.mainKey === "string" ? status.mainKey : "main";
    const model = typeof status.model?.model === "string" ? `, model ${status.model.model}` : "";
    out.line(style.dim(`clawdis chat — session ${session}${model}. /quit or Ctrl+D to leave.`));
  }

  const rl = createInterface({
    input: options.input,
    ...(options.isTTY ? { output: options.output } : {}),
    terminal: options.isTTY,
    prompt: style.bold("› "),
  });
  const message = (text: string) => ({ message: text, channel: "terminal", chatId, messageId: randomUUID() });
  let turn: { controller: AbortController; stopping: boolean } | undefined;

  rl.on("SIGINT", () => {
    if (!turn) {
      rl.close();
      return;
    }
    if (turn.stopping) {
      turn.controller.abort();
      return;
    }
    turn.stopping = true;
    out.line(style.dim("stopping… (Ctrl+C again to stop waiting)"));
    const body = JSON.stringify(message("/stop"));
    gatewayFetch(`${baseUrl}/api/agent`, {
      method: "POST",
      headers: { authorization: `Bearer ${options.token}`, "content-type": "application/json" },
      body,
    }).catch(() => {});
  });

  try {
    if (options.isTTY) rl.prompt();
    for await (const raw of rl) {
      const text = raw.trim();
      if (QUIT.has(text)) break;
      if (text.length > 0) {
        turn = { controller: new AbortController(), stopping: false };
        const end = await streamTurn({
          baseUrl,
          token: options.token,
          body: message(raw.trimEnd()),
          out,
          style,
          signal: turn.controller.signal,
          markdown: color,
        });
        turn = undefined;
        if (end.kind === "exit") return end.code;
      }
      if (options.isTTY) rl.prompt();
    }
    out.newline();
    return 0;
  } finally {
    rl.close();
  }
}
