// Just over 400 lines: the Telegram transport's one lifecycle (start, poll or webhook, send, stop); its deciding
// parts (formatting, intake, retries, downloads) live in the files it imports.
import { setTimeout as sleep } from "node:timers/promises";
import type { Api } from "grammy";
import type { Update, UserFromGetMe } from "grammy/types";
import { type DownloadTimers, downloadLimits } from "../../src/plugin-api/download-deadline.js";
import type {
  AuthorizeResult,
  InboundMessage,
  PluginContext,
  PluginInstance,
  Transport,
} from "../../src/plugin-api/types.js";
import { allowFromWarnings, authorizeSender, logOwner, telegramOwners } from "./allow-list.js";
import { ChatLanes } from "./chat-lanes.js";
import { classifyError, pollBackoffMs } from "./classify-error.js";
import type { TelegramConfig } from "./config.js";
import { fetchMedia } from "./fetch-media.js";
import { grammySignal } from "./grammy-signal.js";
import { handleWebhook } from "./handle-webhook.js";
import { healthLine, PRIVACY_NOTE, type TelegramSnapshot } from "./health-line.js";
import { OffsetStore } from "./offset-store.js";
import { pollRetryMs } from "./poll-retry.js";
import { type ChatButtons, sendTelegram } from "./send.js";
import { splitMessage, TELEGRAM_TEXT_LIMIT } from "./split-message.js";
import { telegramApi } from "./telegram-api.js";
import { CHANNEL, type TelegramInbound, toInbound } from "./to-inbound.js";
import { TypingIndicator } from "./typing-indicator.js";
import { UpdateLedger } from "./update-ledger.js";

/** Seconds one getUpdates waits for news (Telegram's long poll). */
const POLL_TIMEOUT_SECONDS = 25;
/**
 * While an update is open (its files downloading), Telegram answers every getUpdates at once with it (the offset
 * cannot pass it before it is received), so the poller asks again this often for news, or sooner when an update
 * settles.
 */
const BUSY_POLL_MS = 1000;

export interface RuntimeOptions {
  token: string;
  /** Where the token came from (`telegram.botToken` or `TELEGRAM_BOT_TOKEN`): a 401 says what to fix. */
  tokenSource?: string;
  now?: () => number;
  random?: () => number;
  /** The download deadlines' timers (a manual clock in tests). */
  timers?: DownloadTimers;
  /** How the poller waits between failed polls (tests record the waits instead of sleeping them). */
  wait?: (ms: number, signal: AbortSignal) => Promise<void>;
}

/** `setTimeout` from timers/promises; resolves (never rejects) when `signal` aborts. */
async function sleepUnlessStopped(ms: number, signal: AbortSignal): Promise<void> {
  await sleep(ms, undefined, { signal }).catch(() => {});
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
  /** Per chat, the message whose buttons are still up (send.ts). */
  private readonly buttons: ChatButtons = new Map();
  private readonly typing: TypingIndicator;
  private readonly now: () => number;
  private readonly random: () => number;
  private readonly lanes = new ChatLanes();
  private readonly wait: (ms: number, signal: AbortSignal) => Promise<void>;
  private me: UserFromGetMe | undefined;
  private ledger = new UpdateLedger(undefined);
  private savedOffset: number | undefined;
  private offsetWrite: Promise<void> = Promise.resolve();
  private settled: (() => void)[] = [];
  private receiveFailures = 0;
  private loop: Promise<void> | undefined;
  private conflictReported = false;
  private unsubscribe: () => void = () => {};

  constructor(
    private readonly context: PluginContext<TelegramConfig>,
    private readonly options: RuntimeOptions,
  ) {
    const config = context.config;
    this.api = telegramApi(options.token, config.apiRoot);
    this.now = options.now ?? Date.now;
    this.random = options.random ?? Math.random;
    this.wait = options.wait ?? sleepUnlessStopped;
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
      context.http.route(
        "POST",
        config.webhookPath,
        (req, res) =>
          handleWebhook(req, res, {
            secret: this.context.config.webhookSecret ?? "",
            deliver: (update, signal) => this.deliver(update, signal),
            taken: () => {
              this.snapshot.lastOkAt = this.now();
            },
            failed: (message) => {
              this.noteError(message);
              this.context.logger.error("a webhook update was not taken; Telegram will send it again", {
                error: message,
              });
            },
          }),
        { auth: false },
      );
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
      send: (message, signal, confirmed) => sendTelegram(this.api, message, signal, this.buttons, confirmed),
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
          { secret_token: config.webhookSecret ?? "", allowed_updates: ["message", "callback_query"] },
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
    this.savedOffset = await this.offsets.read();
    this.ledger = new UpdateLedger(this.savedOffset);
    this.snapshot.phase = "running";
    logger.info(`Telegram bot @${this.me.username} ready: long polling`, { offset: this.savedOffset });
    this.loop = this.pollLoop();
  }

  async stop(): Promise<void> {
    this.stopping.abort();
    this.unsubscribe();
    this.typing.stopAll();
    await this.loop;
    await this.lanes.idle();
    await this.offsetWrite;
    this.snapshot.phase = "stopped";
  }

  private startError(error: unknown): Error {
    const failure = classifyError(error, this.options.tokenSource);
    const wrapped = new Error(failure.message, { cause: error });
    if (failure.kind === "unauthorized") return Object.assign(wrapped, { fatal: true });
    return wrapped;
  }

  private noteError(message: string): void {
    this.snapshot.lastError = { message, at: this.now() };
  }

  /**
   * getUpdates until stopped. Each new update goes to its chat's lane (files downloaded, then `receive`), so a
   * slow download holds only its own chat; the offset asked with (which confirms to Telegram) and saved is the
   * ledger's: past an update only once it and every update below it were received.
   */
  private async pollLoop(): Promise<void> {
    const signal = this.stopping.signal;
    let failures = 0;
    while (!signal.aborted) {
      // A receive threw: back off before Telegram sends that update again.
      if (this.ledger.hasFailed)
        await this.wait(pollBackoffMs(Math.max(1, this.receiveFailures), this.random), signal);
      if (signal.aborted) return;
      let wait = 0;
      let fresh = 0;
      try {
        // The offset is on disk before Telegram is told it: its write was queued when the ledger reached it.
        const offset = this.ledger.offset();
        await this.offsetWrite;
        const updates = await this.api.getUpdates(
          {
            ...(offset !== undefined ? { offset } : {}),
            timeout: POLL_TIMEOUT_SECONDS,
            allowed_updates: ["message", "callback_query"],
          },
          grammySignal(signal),
        );
        this.snapshot.lastOkAt = this.now();
        this.snapshot.phase = "running";
        if (this.conflictReported)
          this.context.logger.info("Telegram polling works again (the conflict is over)");
        this.conflictReported = false;
        failures = 0;
        for (const update of updates) if (this.dispatch(update, signal)) fresh += 1;
      } catch (error) {
        if (signal.aborted) return;
        failures += 1;
        const failure = classifyError(error, this.options.tokenSource);
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
          wait = pollRetryMs("conflict", failures, this.random);
        } else if (failure.kind === "rate-limit") {
          this.snapshot.phase = "rate-limited";
          this.context.logger.warn(failure.message);
          wait = failure.retryAfterMs;
        } else {
          this.snapshot.phase = "offline";
          wait = pollRetryMs("outage", failures, this.random);
          this.context.logger.warn(`${failure.message}; polling again in ${Math.round(wait / 1000)}s`);
        }
      }
      if (wait > 0) await this.wait(wait, signal);
      else if (fresh === 0 && this.ledger.openCount > 0) await this.nextSettleOr(BUSY_POLL_MS, signal);
    }
  }

  /** Resolves when an update settles, after `ms`, or at the stop, whichever is first. */
  private async nextSettleOr(ms: number, signal: AbortSignal): Promise<void> {
    const timer = new AbortController();
    let wake = () => {};
    const settled = new Promise<void>((resolve) => {
      wake = resolve;
      this.settled.push(resolve);
    });
    await Promise.race([settled, sleepUnlessStopped(ms, AbortSignal.any([signal, timer.signal]))]);
    timer.abort();
    this.settled = this.settled.filter((waiter) => waiter !== wake);
  }

  /**
   * Puts a polled update on its chat's lane, unless it was taken before (Telegram sends the open ones again with
   * every poll). Returns whether it was new.
   */
  private dispatch(update: Update, signal: AbortSignal): boolean {
    const id = update.update_id;
    if (!this.ledger.take(id)) return false;
    let inbound: TelegramInbound | undefined;
    try {
      inbound = this.inboundOf(update);
    } catch (error) {
      this.settle(id, false);
      throw error;
    }
    if (!inbound) {
      this.settle(id, true);
      return true;
    }
    this.lanes.add(
      inbound.message.chatId,
      async () => {
        await this.receiveInbound(inbound, update, signal);
        this.settle(id, true);
      },
      {
        onError: (error) => {
          this.settle(id, false);
          if (signal.aborted) return;
          this.receiveFailures += 1;
          const message = error instanceof Error ? error.message : String(error);
          this.noteError(message);
          this.context.logger.error("an update was not taken; Telegram sends it again", {
            updateId: id,
            error: message,
          });
        },
        skipped: () => this.settle(id, false),
      },
    );
    return true;
  }

  /** An update's handling ended: the ledger learns it, a better offset is saved, the waiting poller wakes. */
  private settle(id: number, ok: boolean): void {
    this.ledger.settle(id, ok);
    if (ok) this.receiveFailures = 0;
    const offset = this.ledger.offset();
    if (offset !== undefined && offset !== this.savedOffset) {
      this.savedOffset = offset;
      // Writes in order; a failed write is reported, and the next settle writes the newer offset.
      this.offsetWrite = this.offsetWrite.then(() =>
        this.offsets.write(offset).catch((error: unknown) => {
          const message = `the Telegram offset was not saved: ${error instanceof Error ? error.message : String(error)}`;
          this.noteError(message);
          this.context.logger.warn(message);
        }),
      );
    }
    for (const wake of this.settled.splice(0)) wake();
  }

  /** The update as the gateway's message, or undefined for one clawdis does not answer. Pure but for `usernames`. */
  private inboundOf(update: Update): TelegramInbound | undefined {
    const me = this.me;
    if (!me) throw new Error("an update arrived before getMe");
    const inbound = toInbound(
      update,
      { id: me.id, username: me.username },
      { requireMention: this.context.config.requireMention, receivedAt: this.now() },
    );
    if (inbound?.username) this.usernames.set(inbound.message.senderId, inbound.username);
    return inbound;
  }

  /** Webhook mode: one update, its files, then `receive`. Throws when `receive` throws. */
  private async deliver(update: Update, signal: AbortSignal): Promise<void> {
    const inbound = this.inboundOf(update);
    if (inbound) await this.receiveInbound(inbound, update, signal);
  }

  /** Downloads the message's files (an allowed sender's only; each within its deadline), then hands it in. */
  private async receiveInbound(inbound: TelegramInbound, update: Update, signal: AbortSignal): Promise<void> {
    const { config } = this.context;
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
        limits: downloadLimits(config.mediaTimeoutSeconds),
        ...(this.options.timers ? { timers: this.options.timers } : {}),
      };
      inbound.message.attachments = [];
      for (const file of inbound.files) inbound.message.attachments.push(await fetchMedia(file, media));
    }
    // A button press is answered at once (its spinner stops), whatever the gateway makes of it.
    if (inbound.callbackQueryId) {
      await this.api
        .answerCallbackQuery(inbound.callbackQueryId, {}, grammySignal(signal))
        .catch((error: unknown) =>
          this.context.logger.warn("could not answer a button press", { error: String(error) }),
        );
    }
    const result = await this.context.receive(inbound.message);
    if (result.status === "duplicate") {
      this.context.logger.debug("update seen before; skipped", { updateId: update.update_id });
    }
  }
}
