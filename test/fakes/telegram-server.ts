import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { type WaitOptions, waitWithDeadline } from "../helpers/wait-deadline.js";

/**
 * A Telegram Bot API server on 127.0.0.1 for tests, spoken to by real grammY (`apiRoot: fake.url`). It keeps what
 * Telegram keeps: a queue of updates confirmed by getUpdates' `offset` (long polling waits up to `timeout`
 * seconds, and a second concurrent poll ends the first with 409 as Telegram does), sent messages with their
 * HTML entities validated the way Telegram does ("can't parse entities", 4096 visible characters), chat
 * actions, files for getFile and their download, a webhook set or deleted. Errors are injected per method
 * (`failNext`). It records every call; waits are on events, never on time.
 *
 * Over 400 lines because it is one fake of one API: every handler reads and changes the same state (the update
 * queue and its offset, the chats' messages, the files, the webhook), which pieces in files of their own would
 * each reach into.
 */

export interface FakeUser {
  id: number;
  first_name: string;
  last_name?: string;
  username?: string;
  is_bot?: boolean;
}

export interface FakeChat {
  id: number;
  type: "private" | "group" | "supergroup";
  title?: string;
}

export interface SentMessage {
  method: string;
  chatId: string;
  messageId: number;
  /** The text as a person sees it (tags parsed, entities unescaped); a caption for files. */
  text: string;
  /** The text as sent (HTML when parseMode is HTML). */
  raw: string;
  parseMode?: string;
  replyToMessageId?: number;
  /** For sendPhoto/sendDocument: the uploaded bytes and file name. */
  file?: { name: string; bytes: Buffer };
  /** Inline buttons under the message (label and callback data), as they are now (editMessageReplyMarkup). */
  buttons?: { text: string; data: string }[];
  /**
   * When this server took the message, then when it wrote its answer (set right after the write):
   * `performance.timeOrigin + performance.now()`, ms, the same clock in every thread of this process.
   */
  takenAt: number;
}

export interface InjectedError {
  status: number;
  description: string;
  retryAfter?: number;
}

export interface ApiCall {
  method: string;
  params: Record<string, unknown>;
}

interface Waiter {
  res: ServerResponse;
  offset: number | undefined;
  timer: NodeJS.Timeout;
}

type Listener = () => void;

const ALLOWED_TAGS = new Set([
  "b",
  "strong",
  "i",
  "em",
  "u",
  "ins",
  "s",
  "strike",
  "del",
  "a",
  "code",
  "pre",
  "span",
  "tg-spoiler",
  "blockquote",
]);

/** Telegram's HTML parse, as far as clawdis uses it: the visible text, or the error Telegram gives. */
export function parseTelegramHtml(html: string): { text: string } | { error: string } {
  const stack: string[] = [];
  let text = "";
  let i = 0;
  while (i < html.length) {
    const ch = html[i]!;
    if (ch === "<") {
      const match = /^<(\/?)([a-z-]+)((?:\s+[a-z-]+="[^"]*")*)\s*>/.exec(html.slice(i));
      if (!match)
        return { error: `Bad Request: can't parse entities: Unsupported start tag at byte offset ${i}` };
      const [whole, closing, tag] = match;
      if (!ALLOWED_TAGS.has(tag!)) {
        return {
          error: `Bad Request: can't parse entities: Unsupported start tag "${tag}" at byte offset ${i}`,
        };
      }
      if (closing) {
        if (stack.pop() !== tag) {
          return {
            error: `Bad Request: can't parse entities: Unmatched end tag at byte offset ${i}, expected "</${stack.at(-1) ?? ""}>", found "</${tag}>"`,
          };
        }
      } else stack.push(tag!);
      i += whole.length;
    } else if (ch === "&") {
      const match = /^&(lt|gt|amp|quot|#[0-9]+);/.exec(html.slice(i));
      if (!match)
        return { error: `Bad Request: can't parse entities: Unsupported entity at byte offset ${i}` };
      const name = match[1]!;
      text +=
        name === "lt"
          ? "<"
          : name === "gt"
            ? ">"
            : name === "amp"
              ? "&"
              : name === "quot"
                ? '"'
                : String.fromCodePoint(Number(name.slice(1)));
      i += match[0].length;
    } else if (ch === ">") {
      text += ch;
      i += 1;
    } else {
      text += ch;
      i += 1;
    }
  }
  if (stack.length > 0) {
    return {
      error: `Bad Request: can't parse entities: Can't find end tag corresponding to start tag "${stack.at(-1)}"`,
    };
  }
  return { text };
}

export class FakeTelegram {
  readonly token: string;
  readonly bot: FakeUser & { can_read_all_group_messages: boolean };
  readonly calls: ApiCall[] = [];
  readonly sent: SentMessage[] = [];
  readonly chatActions: { chatId: string; action: string }[] = [];
  webhook: { url: string; secretToken?: string } | undefined;
  /** The lowest update id Telegram still keeps (everything below was confirmed by an offset). */
  confirmedBelow = 0;
  private readonly updates: Record<string, unknown>[] = [];
  private readonly files = new Map<string, { path: string; bytes: Buffer; trickleMs?: number }>();
  private readonly errors = new Map<string, InjectedError[]>();
  /** Standing failures (`failWhile`), consulted after the `failNext` queue: each call of the method asks each rule. */
  private readonly rules = new Map<
    string,
    Set<(params: Record<string, unknown>) => InjectedError | undefined>
  >();
  private readonly listeners = new Set<Listener>();
  private waiter: Waiter | undefined;
  private nextUpdateId = 1000;
  private nextMessageId = 1;
  private server: Server | undefined;
  url = "";

  constructor(options: { token?: string; username?: string; privacyMode?: boolean } = {}) {
    this.token = options.token ?? "123456:TEST-token";
    this.bot = {
      id: Number(this.token.split(":")[0]) || 123456,
      is_bot: true,
      first_name: "Clawdis",
      username: options.username ?? "clawdis_test_bot",
      can_read_all_group_messages: options.privacyMode === false,
    };
  }

  static async start(options: ConstructorParameters<typeof FakeTelegram>[0] = {}): Promise<FakeTelegram> {
    const fake = new FakeTelegram(options);
    const server = createServer((req, res) => {
      fake.handle(req, res).catch((error: unknown) => {
        res.statusCode = 500;
        res.end(String(error));
      });
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    fake.server = server;
    fake.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    return fake;
  }

  async close(): Promise<void> {
    if (this.waiter) this.answer(this.waiter.res, 200, { ok: true, result: [] });
    this.waiter = undefined;
    const server = this.server;
    if (!server) return;
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  }

  /** Queues an update (a message from someone); returns its update id. Wakes a waiting long poll. */
  pushMessage(message: {
    chat: FakeChat;
    from: FakeUser;
    text?: string;
    caption?: string;
    entities?: Record<string, unknown>[];
    replyTo?: { messageId: number; from: FakeUser; text?: string };
    photo?: { fileId: string; size: number };
    document?: { fileId: string; fileName: string; mimeType: string; size: number };
  }): number {
    const messageId = this.nextMessageId++;
    const msg: Record<string, unknown> = {
      message_id: messageId,
      date: Math.floor(Date.now() / 1000),
      chat: message.chat,
      from: { is_bot: false, ...message.from },
    };
    if (message.text !== undefined) msg.text = message.text;
    if (message.caption !== undefined) msg.caption = message.caption;
    if (message.entities)
      msg[message.text !== undefined ? "entities" : "caption_entities"] = message.entities;
    if (message.replyTo) {
      msg.reply_to_message = {
        message_id: message.replyTo.messageId,
        date: msg.date,
        chat: message.chat,
        from: message.replyTo.from,
        ...(message.replyTo.text !== undefined ? { text: message.replyTo.text } : {}),
      };
    }
    if (message.photo) {
      msg.photo = [
        {
          file_id: `${message.photo.fileId}-small`,
          file_unique_id: "s",
          width: 90,
          height: 90,
          file_size: 10,
        },
        {
          file_id: message.photo.fileId,
          file_unique_id: "b",
          width: 800,
          height: 800,
          file_size: message.photo.size,
        },
      ];
    }
    if (message.document) {
      msg.document = {
        file_id: message.document.fileId,
        file_unique_id: message.document.fileId,
        file_name: message.document.fileName,
        mime_type: message.document.mimeType,
        file_size: message.document.size,
      };
    }
    return this.pushUpdate({ message: msg });
  }

  /** A press of a button under message `messageId` in `chat` by `from`: a `callback_query` update. */
  pushPress(press: { chat: FakeChat; from: FakeUser; messageId: number; data: string }): number {
    return this.pushUpdate({
      callback_query: {
        id: `cq-${this.nextUpdateId}`,
        from: { is_bot: false, ...press.from },
        chat_instance: String(press.chat.id),
        data: press.data,
        message: { message_id: press.messageId, date: Math.floor(Date.now() / 1000), chat: press.chat },
      },
    });
  }

  pushUpdate(update: Record<string, unknown>): number {
    const updateId = this.nextUpdateId++;
    this.updates.push({ update_id: updateId, ...update });
    this.wakePoll();
    return updateId;
  }

  /** Updates Telegram still holds (not confirmed by an offset). */
  pending(): number[] {
    return this.updates.map((u) => u.update_id as number).filter((id) => id >= this.confirmedBelow);
  }

  /** A file getFile can describe and the client can download. */
  addFile(fileId: string, path: string, bytes: Buffer): void {
    this.files.set(fileId, { path, bytes });
  }

  /**
   * Downloads of trickling files (`addTricklingFile`), in the order they began: bytes sent so far, and how the
   * download ended (`aborted`: the client went away first).
   */
  readonly trickles: { path: string; sent: number; ended?: "done" | "aborted" }[] = [];

  /** A file served one byte every `everyMs` (a stalled server: bytes keep coming, far too slowly). */
  addTricklingFile(fileId: string, path: string, bytes: Buffer, everyMs: number): void {
    this.files.set(fileId, { path, bytes, trickleMs: everyMs });
  }

  private trickle(path: string, bytes: Buffer, everyMs: number, res: ServerResponse): void {
    const download: { path: string; sent: number; ended?: "done" | "aborted" } = { path, sent: 0 };
    this.trickles.push(download);
    res.statusCode = 200;
    res.setHeader("content-length", bytes.length);
    res.flushHeaders();
    const timer = setInterval(() => {
      res.write(bytes.subarray(download.sent, download.sent + 1));
      download.sent += 1;
      if (download.sent < bytes.length) return;
      clearInterval(timer);
      download.ended = "done";
      res.end();
      this.notify();
    }, everyMs);
    res.on("close", () => {
      clearInterval(timer);
      download.ended ??= "aborted";
      this.notify();
    });
    this.notify();
  }

  /** The next `times` calls of `method` fail with this error (429 carries `retry_after`). */
  failNext(method: string, error: InjectedError, times = 1): void {
    const queue = this.errors.get(method) ?? [];
    for (let i = 0; i < times; i++) queue.push(error);
    this.errors.set(method, queue);
  }

  /**
   * Until the returned function is called, every call of `method` for which `rule(params)` gives an error fails
   * with it (a long outage of one method, or of one chat: `params.chat_id`). Calls that fail are recorded in
   * `calls` as all calls are; `failedCalls` counts them by method and chat.
   */
  failWhile(
    method: string,
    rule: (params: Record<string, unknown>) => InjectedError | undefined,
  ): () => void {
    const set = this.rules.get(method) ?? new Set();
    set.add(rule);
    this.rules.set(method, set);
    return () => {
      set.delete(rule);
    };
  }

  /** Calls of `method` (to `chatId`, when given) answered with an injected error. */
  failedCalls(method: string, chatId?: number | string): number {
    return this.failures.filter(
      (f) => f.method === method && (chatId === undefined || f.chatId === String(chatId)),
    ).length;
  }

  private readonly failures: { method: string; chatId: string }[] = [];

  /** Calls of `method` so far. */
  callsOf(method: string): ApiCall[] {
    return this.calls.filter((call) => call.method === method);
  }

  textsTo(chatId: number | string): string[] {
    return this.sent.filter((m) => m.chatId === String(chatId)).map((m) => m.text);
  }

  /**
   * Resolves once `predicate` holds (checked after every API call and now); rejects after `timeoutMs` (default
   * WAIT_DEADLINE_MS) with `what` and a summary of the calls so far.
   */
  waitFor<T>(
    predicate: () => T | undefined | false,
    what = "a condition",
    options: WaitOptions = {},
  ): Promise<T> {
    return waitWithDeadline<T>(
      () => `${what} at the fake Telegram server; ${this.describeCalls()}`,
      options.timeoutMs,
      (resolve, reject) => {
        const check = () => {
          let value: T | undefined | false;
          try {
            value = predicate();
          } catch (error) {
            reject(error);
            return;
          }
          if (value !== undefined && value !== false) resolve(value);
        };
        Object.defineProperty(check, "name", { value: what });
        this.listeners.add(check);
        check();
        return () => this.listeners.delete(check);
      },
    );
  }

  /** The API calls so far by method, and the last texts sent: what a timed-out wait saw instead. */
  describeCalls(): string {
    const counts = new Map<string, number>();
    for (const call of this.calls) counts.set(call.method, (counts.get(call.method) ?? 0) + 1);
    const methods = [...counts].map(([method, n]) => `${method}×${n}`).join(", ") || "none";
    const last = this.sent.slice(-5).map((m) => `${m.chatId}: ${JSON.stringify(m.text.slice(0, 80))}`);
    return `calls: ${methods}; ${this.sent.length} sent${last.length > 0 ? `, the last: ${last.join(" | ")}` : ""}; pending updates ${this.pending().length}; polling ${this.polling}`;
  }

  /**
   * The reverse proxy in front of the gateway: where `postToWebhook` posts instead of the registered https:// URL
   * (which the tests cannot serve). Unset: the registered URL itself.
   */
  webhookProxy: string | undefined;

  /** Posts an update to the webhook that setWebhook registered, with `secret` as the secret header. */
  async postToWebhook(update: Record<string, unknown>, secret: string | undefined): Promise<number> {
    if (!this.webhook) throw new Error("no webhook is set");
    const res = await fetch(this.webhookProxy ?? this.webhook.url, {
      method: "POST",
      headers: {
        "content-type": "application/json",
        ...(secret !== undefined ? { "x-telegram-bot-api-secret-token": secret } : {}),
      },
      body: JSON.stringify(update),
    });
    await res.text();
    return res.status;
  }

  /** A message update (for postToWebhook), with a fresh update id and message id. */
  messageUpdate(chat: FakeChat, from: FakeUser, text: string): Record<string, unknown> {
    return {
      update_id: this.nextUpdateId++,
      message: { message_id: this.nextMessageId++, date: Math.floor(Date.now() / 1000), chat, from, text },
    };
  }

  private notify(): void {
    for (const listener of [...this.listeners]) listener();
  }

  private answer(res: ServerResponse, status: number, body: unknown): void {
    if (res.writableEnded) return;
    res.statusCode = status;
    res.setHeader("content-type", "application/json");
    res.end(JSON.stringify(body));
    // The message this request recorded was answered just now: its answer is on its way to the sender.
    if (this.answering) this.answering.takenAt = performance.timeOrigin + performance.now();
    this.answering = undefined;
  }

  /** The message recorded by the request being answered (its `takenAt` is set once the answer is written). */
  private answering: SentMessage | undefined;

  private fail(res: ServerResponse, error: InjectedError): void {
    this.answer(res, error.status, {
      ok: false,
      error_code: error.status,
      description: error.description,
      ...(error.retryAfter !== undefined ? { parameters: { retry_after: error.retryAfter } } : {}),
    });
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = new URL(req.url ?? "/", "http://127.0.0.1");
    const file = /^\/file\/bot([^/]+)\/(.+)$/.exec(url.pathname);
    if (file && req.method === "GET") {
      if (file[1] !== this.token)
        return this.answer(res, 401, { ok: false, error_code: 401, description: "Unauthorized" });
      const found = [...this.files.values()].find((f) => f.path === decodeURIComponent(file[2]!));
      if (!found) return this.answer(res, 404, { ok: false, error_code: 404, description: "Not Found" });
      if (found.trickleMs !== undefined) return this.trickle(found.path, found.bytes, found.trickleMs, res);
      res.statusCode = 200;
      res.end(found.bytes);
      return;
    }
    const api = /^\/bot([^/]+)\/([A-Za-z]+)$/.exec(url.pathname);
    if (!api) return this.answer(res, 404, { ok: false, error_code: 404, description: "Not Found" });
    const [, token, method] = api as unknown as [string, string, string];
    const { params, uploads } = await readParams(req);
    this.calls.push({ method, params });
    try {
      if (token !== this.token)
        return this.answer(res, 401, { ok: false, error_code: 401, description: "Unauthorized" });
      let injected = this.errors.get(method)?.shift();
      for (const rule of this.rules.get(method) ?? []) injected ??= rule(params);
      if (injected) {
        this.failures.push({ method, chatId: String(params.chat_id ?? "") });
        return this.fail(res, injected);
      }
      this.dispatch(method, params, uploads, res);
    } finally {
      this.notify();
    }
  }

  private dispatch(
    method: string,
    params: Record<string, unknown>,
    uploads: Map<string, { name: string; bytes: Buffer }>,
    res: ServerResponse,
  ) {
    const ok = (result: unknown) => this.answer(res, 200, { ok: true, result });
    const bad = (description: string) => this.fail(res, { status: 400, description });
    switch (method) {
      case "getMe":
        return ok(this.bot);
      case "getUpdates":
        return this.getUpdates(params, res);
      case "setWebhook":
        this.webhook = {
          url: String(params.url),
          ...(params.secret_token ? { secretToken: String(params.secret_token) } : {}),
        };
        return ok(true);
      case "deleteWebhook":
        this.webhook = undefined;
        return ok(true);
      case "sendChatAction":
        this.chatActions.push({ chatId: String(params.chat_id), action: String(params.action) });
        return ok(true);
      case "getFile": {
        const found = this.files.get(String(params.file_id));
        if (!found) return bad("Bad Request: invalid file_id");
        return ok({
          file_id: params.file_id,
          file_unique_id: params.file_id,
          file_size: found.bytes.length,
          file_path: found.path,
        });
      }
      case "sendMessage": {
        const raw = String(params.text ?? "");
        const parsed = params.parse_mode === "HTML" ? parseTelegramHtml(raw) : { text: raw };
        if ("error" in parsed) return bad(parsed.error);
        if (parsed.text.trim() === "") return bad("Bad Request: message text is empty");
        if (parsed.text.length > 4096) return bad("Bad Request: message is too long");
        return ok(this.record(method, params, raw, parsed.text));
      }
      case "answerCallbackQuery":
        return ok(true);
      case "editMessageReplyMarkup": {
        const sent = this.sent.find(
          (m) => m.chatId === String(params.chat_id) && m.messageId === Number(params.message_id),
        );
        if (!sent) return bad("Bad Request: message to edit not found");
        sent.buttons = buttonsOf(params.reply_markup);
        return ok(true);
      }
      case "sendPhoto":
      case "sendDocument": {
        const field = method === "sendPhoto" ? "photo" : "document";
        const ref = String(params[field] ?? "");
        const upload = ref.startsWith("attach://") ? uploads.get(ref.slice(9)) : undefined;
        if (!upload) return bad(`Bad Request: there is no ${field} in the request`);
        const caption = String(params.caption ?? "");
        return ok(this.record(method, params, caption, caption, upload));
      }
      default:
        return this.answer(res, 404, {
          ok: false,
          error_code: 404,
          description: "Not Found: method not found",
        });
    }
  }

  private record(
    method: string,
    params: Record<string, unknown>,
    raw: string,
    text: string,
    file?: { name: string; bytes: Buffer },
  ): Record<string, unknown> {
    const messageId = this.nextMessageId++;
    const reply = params.reply_parameters as { message_id?: number } | undefined;
    const sent: SentMessage = {
      method,
      chatId: String(params.chat_id),
      messageId,
      text,
      raw,
      takenAt: performance.timeOrigin + performance.now(),
    };
    if (typeof params.parse_mode === "string") sent.parseMode = params.parse_mode;
    if (reply?.message_id !== undefined) sent.replyToMessageId = reply.message_id;
    if (file) sent.file = file;
    if (params.reply_markup !== undefined) sent.buttons = buttonsOf(params.reply_markup);
    this.sent.push(sent);
    this.answering = sent;
    return {
      message_id: messageId,
      date: Math.floor(Date.now() / 1000),
      chat: { id: Number(params.chat_id), type: "private" },
      text,
    };
  }

  private getUpdates(params: Record<string, unknown>, res: ServerResponse) {
    if (this.webhook) {
      return this.fail(res, {
        status: 409,
        description:
          "Conflict: can't use getUpdates method while webhook is active; use deleteWebhook to delete the webhook first",
      });
    }
    const offset = typeof params.offset === "number" ? params.offset : undefined;
    if (offset !== undefined) this.confirmedBelow = Math.max(this.confirmedBelow, offset);
    if (this.waiter) {
      // Telegram ends the older of two concurrent polls.
      const older = this.waiter;
      clearTimeout(older.timer);
      this.waiter = undefined;
      this.fail(older.res, {
        status: 409,
        description:
          "Conflict: terminated by other getUpdates request; make sure that only one bot instance is running",
      });
    }
    const ready = this.available();
    const timeout = typeof params.timeout === "number" ? params.timeout : 0;
    if (ready.length > 0 || timeout <= 0) return this.answer(res, 200, { ok: true, result: ready });
    const waiter: Waiter = {
      res,
      offset,
      timer: setTimeout(() => {
        if (this.waiter === waiter) this.waiter = undefined;
        this.answer(res, 200, { ok: true, result: [] });
      }, timeout * 1000),
    };
    this.waiter = waiter;
    res.on("close", () => {
      clearTimeout(waiter.timer);
      if (this.waiter === waiter) this.waiter = undefined;
      this.notify();
    });
  }

  private available(): Record<string, unknown>[] {
    return this.updates.filter((u) => (u.update_id as number) >= this.confirmedBelow).slice(0, 100);
  }

  private wakePoll(): void {
    const waiter = this.waiter;
    if (!waiter) return;
    const ready = this.available();
    if (ready.length === 0) return;
    clearTimeout(waiter.timer);
    this.waiter = undefined;
    this.answer(waiter.res, 200, { ok: true, result: ready });
  }

  /** Whether a long poll is waiting now (the transport is polling). */
  get polling(): boolean {
    return this.waiter !== undefined;
  }
}

async function readBody(req: IncomingMessage): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}

/** JSON, urlencoded or multipart parameters (grammY sends multipart when a file is uploaded). */
async function readParams(
  req: IncomingMessage,
): Promise<{ params: Record<string, unknown>; uploads: Map<string, { name: string; bytes: Buffer }> }> {
  const body = await readBody(req);
  const type = req.headers["content-type"] ?? "";
  const uploads = new Map<string, { name: string; bytes: Buffer }>();
  if (body.length === 0) return { params: {}, uploads };
  if (type.startsWith("application/json"))
    return { params: JSON.parse(body.toString("utf8")) as Record<string, unknown>, uploads };
  const boundary = /boundary=("?)([^";]+)\1/.exec(type)?.[2];
  if (!boundary) return { params: Object.fromEntries(new URLSearchParams(body.toString("utf8"))), uploads };
  const params: Record<string, unknown> = {};
  const delimiter = Buffer.from(`--${boundary}`);
  let at = body.indexOf(delimiter);
  while (at >= 0) {
    const start = at + delimiter.length;
    const next = body.indexOf(delimiter, start);
    if (next < 0) break;
    const part = body.subarray(start + 2, next - 2);
    const split = part.indexOf("\r\n\r\n");
    const head = part.subarray(0, split).toString("utf8");
    const content = part.subarray(split + 4);
    const name = /name="([^"]+)"/i.exec(head)?.[1];
    const filename = /filename="?([^"\r\n;]+)"?/i.exec(head)?.[1];
    if (name) {
      if (filename) uploads.set(name, { name: filename, bytes: Buffer.from(content) });
      else {
        const text = content.toString("utf8");
        try {
          params[name] = JSON.parse(text) as unknown;
        } catch {
          params[name] = text;
        }
      }
    }
    at = next;
  }
  return { params, uploads };
}

/** The inline keyboard of a `reply_markup` (an object, or its JSON), as one flat list of buttons. */
function buttonsOf(markup: unknown): { text: string; data: string }[] {
  const value = typeof markup === "string" ? (JSON.parse(markup) as unknown) : markup;
  const rows = (value as { inline_keyboard?: { text: string; callback_data?: string }[][] } | undefined)
    ?.inline_keyboard;
  return (rows ?? []).flat().map((b) => ({ text: b.text, data: b.callback_data ?? "" }));
}
