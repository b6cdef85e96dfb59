import type { ChildProcess } from "node:child_process";
import { randomUUID } from "node:crypto";
import { readFile } from "node:fs/promises";
import { EventStream } from "./event-stream.js";
import { OutputLog } from "./output-log.js";

/**
 * The processes the end-to-end harness starts (harness.ts): a `clawdis …` child with its output captured, and a
 * running gateway with clients for its HTTP API and the echo transport. Every wait has a deadline that names what
 * it waited for.
 */

export const LISTENING = /listening on (http:\/\/\S+)/;
/** How long a SIGTERM'd gateway may take before the test calls it a failure (the product's own deadline is 30 s). */
export const STOP_DEADLINE_MS = 10_000;
/** How long `call` waits for an answer (a turn included) before failing with the gateway's stderr. */
export const CALL_DEADLINE_MS = 20_000;

export type Json = Record<string, unknown>;

export interface AgentReply {
  payloads: { text: string }[];
  meta: {
    durationMs: number;
    model: string | null;
    usage: Json | null;
    stopReason: string;
    sessionKey: string;
    sessionId: string;
    error?: string;
  };
}

export interface OutboxItem {
  channel: string;
  chatId: string;
  text: string;
  kind: "reply" | "notice";
  replyToMessageId?: string;
  messageId: string;
}

export interface EchoInbound {
  chatId: string;
  senderId: string;
  text: string;
  messageId?: string;
  chatType?: "direct" | "group";
  mentioned?: boolean;
  replyTo?: { messageId: string; text?: string; fromAgent?: boolean };
  /** Files as the echo transport takes them: base64, written into its staging area. */
  files?: { fileName: string; contentBase64: string; kind?: string; mimeType?: string; caption?: string }[];
}

export interface HttpAnswer<T = Json> {
  status: number;
  body: T;
}

export interface Exit {
  code: number | null;
  signal: NodeJS.Signals | null;
}

/** A `clawdis …` child process with its output captured. */
export class ClawdisProcess {
  readonly stdout: OutputLog;
  readonly stderr: OutputLog;
  readonly exited: Promise<Exit>;

  constructor(
    readonly child: ChildProcess,
    readonly label: string,
  ) {
    if (!child.stdout || !child.stderr) throw new Error("spawn the child with piped stdout and stderr");
    this.stdout = new OutputLog(child.stdout, `${label} stdout`);
    this.stderr = new OutputLog(child.stderr, `${label} stderr`);
    this.exited = new Promise((resolve) => {
      child.once("close", (code, signal) => resolve({ code, signal }));
    });
  }

  get pid(): number {
    return this.child.pid ?? -1;
  }

  get running(): boolean {
    return this.child.exitCode === null && this.child.signalCode === null;
  }

  /** Types a line on stdin. */
  write(line: string): void {
    this.child.stdin?.write(`${line}\n`);
  }

  /** Waits for the exit; a process that outlives `timeoutMs` fails the test (and is killed). */
  async waitForExit(timeoutMs = STOP_DEADLINE_MS): Promise<Exit> {
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<"late">((resolve) => {
      timer = setTimeout(() => resolve("late"), timeoutMs);
    });
    const result = await Promise.race([this.exited, late]);
    clearTimeout(timer);
    if (result === "late") {
      this.child.kill("SIGKILL");
      throw new Error(`${this.label} did not exit within ${timeoutMs} ms; stderr:\n${this.stderr.tail()}`);
    }
    return result;
  }

  async kill(): Promise<Exit> {
    if (this.running) this.child.kill("SIGKILL");
    return this.exited;
  }
}

/** A running `clawdis gateway`: its URL and token, and clients for its HTTP API and the echo transport. */
export class GatewayProcess extends ClawdisProcess {
  url = "";
  token = "";

  /** Waits for the `listening on http://…` log line, then reads the token the gateway created. */
  async ready(tokenPath: string, timeoutMs?: number): Promise<this> {
    const { match } = await this.stderr.waitFor(LISTENING, timeoutMs === undefined ? {} : { timeoutMs });
    this.url = match[1] ?? "";
    this.token = (await readFile(tokenPath, "utf8")).trim();
    return this;
  }

  /** SIGTERM, then the exit (within STOP_DEADLINE_MS). */
  async stop(): Promise<Exit> {
    if (this.running) this.child.kill("SIGTERM");
    return this.waitForExit(STOP_DEADLINE_MS);
  }

  async call<T = Json>(
    method: string,
    path: string,
    body?: unknown,
    headers: Json = {},
  ): Promise<HttpAnswer<T>> {
    const signal = AbortSignal.timeout(CALL_DEADLINE_MS);
    let res: Response;
    let text: string;
    try {
      res = await fetch(`${this.url}${path}`, {
        method,
        signal,
        headers: {
          authorization: `Bearer ${this.token}`,
          ...(body === undefined ? {} : { "content-type": "application/json" }),
          ...(headers as Record<string, string>),
        },
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      });
      text = await res.text();
    } catch (error) {
      if (!signal.aborted) throw error;
      throw new Error(
        `${method} ${path} to ${this.label}: no answer within ${CALL_DEADLINE_MS} ms; stderr:\n${this.stderr.tail(2000)}`,
      );
    }
    let parsed: unknown = text;
    try {
      parsed = JSON.parse(text);
    } catch {
      // Not JSON: the raw text is the body.
    }
    return { status: res.status, body: parsed as T };
  }

  /**
   * Resolves once the store update of the primary session's last turn is written: that update follows the reply,
   * and `/status` is answered once it is (at most 1 s). For a test that edits or snapshots `sessions.json` right
   * after another test's turn.
   */
  async storeSettled(): Promise<void> {
    const answer = await this.agent("/status");
    if (answer.status !== 200) throw new Error(`/status answered ${answer.status}`);
  }

  /** `POST /api/agent` (by default as the web chat would send it), answered when the turn is over. */
  agent(message: string, extra: Json = {}): Promise<HttpAnswer<AgentReply>> {
    return this.call<AgentReply>("POST", "/api/agent", {
      message,
      channel: "webchat",
      chatId: "webchat-e2e",
      messageId: randomUUID(),
      ...extra,
    });
  }

  /** `POST /echo/inbound`: a message through the echo transport. `wait`: answered when its turn is over. */
  echo(message: EchoInbound, options: { wait?: boolean } = {}): Promise<HttpAnswer> {
    const body = { messageId: randomUUID(), ...message };
    return this.call("POST", `/echo/inbound${options.wait ? "?wait=1" : ""}`, body);
  }

  async outbox(): Promise<OutboxItem[]> {
    const answer = await this.call<OutboxItem[]>("GET", "/echo/outbox");
    if (answer.status !== 200) throw new Error(`GET /echo/outbox answered ${answer.status}`);
    return answer.body;
  }

  /** Subscribes to `/api/events`; resolves once subscribed. */
  events(session?: string): Promise<EventStream> {
    return EventStream.open(this.url, this.token, session);
  }
}
