import { timingSafeEqual } from "node:crypto";
import type { ServerResponse } from "node:http";
import { setTimeout as sleep } from "node:timers/promises";
import { Api } from "grammy";
import type { Update, UserFromGetMe } from "grammy/types";
import type {
  AuthorizeResult,
  HttpRequest,
  InboundMessage,
  PluginContext,
  PluginInstance,
  Transport,
} from "../../src/plugin-api/types.js";
import { allowFromWarnings, authorizeSender, ownerLine, telegramOwners } from "./allow-list.js";
import { classifyError, pollBackoffMs } from "./classify-error.js";
import type { TelegramConfig } from "./config.js";
import { fetchMedia } from "./fetch-media.js";
import { grammySignal } from "./grammy-signal.js";
import { healthLine, PRIVACY_NOTE, type TelegramSnapshot } from "./health-line.js";
import { OffsetStore } from "./offset-store.js";
import { sendTelegram } from "./send.js";
import { splitMessage, TELEGRAM_TEXT_LIMIT } from "./split-message.js";
import { CHANNEL, toInbound } from "./to-inbound.js";
import { TypingIndicator } from "./typing-indicator.js";

/** Seconds one getUpdates waits for news (Telegram's long poll). */
const POLL_TIMEOUT_SECONDS = 25;

export interface RuntimeOptions {
  token: string;
  now?: () => number;
  random?: () => number;
}

/**
 * One instance of the Telegram transport: getMe at start, then long polling (or a webhook on the gateway's HTTP
 * server), every update handed to the gateway before its offset is saved, sends through grammY's Api, a typing
 * indicator per running turn. See README.md for the invariants.
 */
export class TelegramRuntime {
  readonly api: Api;
  private readonly snapshot: TelegramSnapshot;
  private readonly offsets: OffsetStore;
  private readonly stopping = new AbortController();
  private readonly usernames = new Map<string, string>();
  private readonly typing: TypingIndicator;
  private readonly now: () => number;
  private readonly random: () => number;
  private me: UserFromGetMe | undefined;
  private offset: number | undefined;
  private loop: Promise<void> | undefined;
  private conflictReported = false;
  private unsubscribe: () => void = () => {};

  constructor(
    private readonly context: PluginContext<TelegramConfig>,
    private readonly options: RuntimeOptions,
  ) {
    const config = context.config;
    this.api = new Api(options.token, { apiRoot: config.apiRoot });
    this.now = options.now ?? Date.now;
    this.random = options.random ?? Math.random;
    this.offsets = new OffsetStore(context.pluginStateDir);
    this.snapshot = { phase: "starting", mode: config.webhookUrl ? "webhook" : "polling" };
    this.typing = new TypingIndicator(
      (chatId) => this.api.sendChatAction(chatId, "typing", {}, grammySignal(this.stopping.signal)),
      (chatId, error) =>
        context.logger.debug("typing indicator failed", { chatId, error: classifyError(error).message }),
    );
    this.unsubscribe = context.onEvent((event) => {
      if (event.type === "turn-start" && event.channel === CHANNEL)
        this.typing.start(event.turnId, event.chatId);
      if (event.type === "turn-end" && event.channel === CHANNEL) this.typing.stop(event.turnId);
    });
    if (config.webhookUrl) {
      context.http.route("POST", config.webhookPath, (req, res) => this.onWebhook(req, res), { auth: false });
    }
  }

  instance(): PluginInstance {
    return {
      start: (signal) => this.start(signal),
      stop: () => this.stop(),
      transport: this.transport(),
    };
  }

  transport(): Transport {
    return {
      capabilities: { maxTextLength: TELEGRAM_TEXT_LIMIT, attachments: true },
      // `context.config` at each message: `telegram.allowFrom` changes while the gateway runs.
      authorize: (message) => this.authorize(message, this.usernames.get(message.senderId)),
      send: (message, signal) => sendTelegram(this.api, message, signal),
      split: (text) => splitMessage(text),
      health: () => healthLine(this.snapshot, this.now()),
    };
  }

  /** `authorizeSender` on the settings of now: `telegram.allowFrom` and `inbound.owner` change while it runs. */
  private authorize(message: InboundMessage, username: string | undefined): AuthorizeResult {
    const { config, gatewayConfig, id } = this.context;
    const owners = telegramOwners(config.allowFrom, gatewayConfig.inbound.owner[id]).ids;
    return authorizeSender(config.allowFrom, owners, message, username);
  }

  async start(signal: AbortSignal): Promise<void> {
    const { config, logger } = this.context;
    try {
      this.me = await this.api.getMe(grammySignal(signal));
    } catch (error) {
      throw this.startError(error);
    }
    this.snapshot.username = this.me.username;
    this.snapshot.privacyMode = this.me.can_read_all_group_messages === false;
    for (const line of allowFromWarnings(config.allowFrom)) logger.warn(line);
    logOwner(this.context);
    if (this.snapshot.privacyMode) logger.info(PRIVACY_NOTE);
    if (config.webhookUrl) {
      try {
        await this.api.setWebhook(
          config.webhookUrl,
          { secret_token: config.webhookSecret ?? "", allowed_updates: ["message"] },
          grammySignal(signal),
        );
      } catch (error) {
        throw this.startError(error);
      }
      this.snapshot.phase = "running";
      logger.info(
        `Telegram bot @${this.me.username} ready: webhook ${config.webhookUrl} -> ${config.webhookPath}`,
      );
      return;
    }
    try {
      // A webhook left set (an earlier webhook run) makes getUpdates fail with 409.
      await this.api.deleteWebhook({}, grammySignal(signal));
    } catch (error) {
      throw this.startError(error);
    }
    this.offset = await this.offsets.read();
    this.snapshot.phase = "running";
    logger.info(`Telegram bot @${this.me.username} ready: long polling`, { offset: this.offset });
    this.loop = this.pollLoop();
  }

  async stop(): Promise<void> {
    this.stopping.abort();
    this.unsubscribe();
    this.typing.stopAll();
    await this.loop;
    this.snapshot.phase = "stopped";
  }

  private startError(error: unknown): Error {
    const failure = classifyError(error);
    const wrapped = new Error(failure.message, { cause: error });
    if (failure.kind === "unauthorized") return Object.assign(wrapped, { fatal: true });
    return wrapped;
  }

  private noteError(message: string): void {
    this.snapshot.lastError = { message, at: this.now() };
  }

  /** getUpdates until stopped; each batch handed in, in order, before the next poll confirms it to Telegram. */
  private async pollLoop(): Promise<void> {
    const signal = this.stopping.signal;
    let failures = 0;
    while (!signal.aborted) {
      let wait = 0;
      try {
        const updates = await this.api.getUpdates(
          {
            ...(this.offset !== undefined ? { offset: this.offset } : {}),
            timeout: POLL_TIMEOUT_SECONDS,
            allowed_updates: ["message"],
          },
          grammySignal(signal),
        );
        this.snapshot.lastOkAt = this.now();
        this.snapshot.phase = "running";
        if (this.conflictReported)
          this.context.logger.info("Telegram polling works again (the conflict is over)");
        this.conflictReported = false;
        failures = 0;
        for (const update of updates) await this.handleUpdate(update, signal);
      } catch (error) {
        if (signal.aborted) return;
        failures += 1;
        const failure = classifyError(error);
        this.noteError(failure.message);
        if (failure.kind === "unauthorized") {
          this.snapshot.phase = "offline";
          this.context.fail(Object.assign(new Error(failure.message, { cause: error }), { fatal: true }));
          return;
        }
        if (failure.kind === "conflict") {
          this.snapshot.phase = "conflict";
          if (!this.conflictReported) this.context.logger.warn(failure.message);
          this.conflictReported = true;
          wait = pollBackoffMs(failures, this.random);
        } else if (failure.kind === "rate-limit") {
          this.snapshot.phase = "rate-limited";
          this.context.logger.warn(failure.message);
          wait = failure.retryAfterMs;
        } else {
          this.snapshot.phase = "offline";
          wait = pollBackoffMs(failures, this.random);
          this.context.logger.warn(`${failure.message}; polling again in ${Math.round(wait / 1000)}s`);
        }
      }
      if (wait > 0) {
        try {
          await sleep(wait, undefined, { signal });
        } catch {
          return;
        }
      }
    }
  }

  /**
   * Hands one update to the gateway, then saves the offset past it. Throws when `receive` throws: the offset
   * stays, and the update is asked for again.
   */
  private async handleUpdate(update: Update, signal: AbortSignal): Promise<void> {
    if (this.offset !== undefined && update.update_id < this.offset) return;
    await this.deliver(update, signal);
    this.offset = update.update_id + 1;
    await this.offsets.write(this.offset);
  }

  private async deliver(update: Update, signal: AbortSignal): Promise<void> {
    const me = this.me;
    if (!me) throw new Error("an update arrived before getMe");
    const { config } = this.context;
    const inbound = toInbound(
      update,
      { id: me.id, username: me.username },
      { requireMention: config.requireMention, receivedAt: this.now() },
    );
    if (!inbound) return;
    if (inbound.username) this.usernames.set(inbound.message.senderId, inbound.username);
    // A stranger's files are not downloaded: the gateway denies the message, and it must cost no write.
    const allowed = this.authorize(inbound.message, inbound.username).allowed;
    if (allowed && inbound.files.length > 0) {
      const media = {
        api: this.api,
        token: this.options.token,
        apiRoot: config.apiRoot,
        stagingDir: this.context.stagingDir,
        maxBytes: config.mediaMaxMb * 1024 * 1024,
        signal,
      };
      inbound.message.attachments = [];
      for (const file of inbound.files) inbound.message.attachments.push(await fetchMedia(file, media));
    }
    const result = await this.context.receive(inbound.message);
    if (result.status === "duplicate") {
      this.context.logger.debug("update seen before; skipped", { updateId: update.update_id });
    }
  }

  /** Webhook mode: Telegram POSTs one update; 200 only once the gateway took it, so a failure is redelivered. */
  private async onWebhook(req: HttpRequest, res: ServerResponse): Promise<void> {
    const expected = this.context.config.webhookSecret ?? "";
    const header = req.headers["x-telegram-bot-api-secret-token"];
    const given = typeof header === "string" ? header : "";
    if (!expected || !sameSecret(given, expected)) {
      res.statusCode = 401;
      res.end("wrong or missing X-Telegram-Bot-Api-Secret-Token\n");
      return;
    }
    let update: Update;
    try {
      update = JSON.parse(await req.body()) as Update;
      if (typeof update?.update_id !== "number") throw new Error("no update_id");
    } catch {
      res.statusCode = 400;
      res.end("the body must be a Telegram update (JSON with update_id)\n");
      return;
    }
    try {
      await this.deliver(update, req.signal);
      this.snapshot.lastOkAt = this.now();
      res.statusCode = 200;
      res.end("ok\n");
    } catch (error) {
      const message = error instanceof Error ? error.message : String(error);
      this.noteError(message);
      this.context.logger.error("a webhook update was not taken; Telegram will send it again", {
        error: message,
      });
      res.statusCode = 500;
      res.end("not taken; send it again\n");
    }
  }
}

function sameSecret(given: string, expected: string): boolean {
  const a = Buffer.from(given);
  const b = Buffer.from(expected);
  return a.length === b.length && timingSafeEqual(a, b);
}

/** Says who the owner is on Telegram (at start, and when `telegram.allowFrom` or `inbound.owner` changes). */
export function logOwner(
  context: Pick<PluginContext<TelegramConfig>, "config" | "gatewayConfig" | "id" | "logger">,
): void {
  const line = ownerLine(context.config.allowFrom, context.gatewayConfig.inbound.owner[context.id]);
  if (line) context.logger[line.level](line.text);
}
