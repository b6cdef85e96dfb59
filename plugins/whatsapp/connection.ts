import makeWASocket, {
  type BaileysEventMap,
  type ConnectionState,
  generateMessageIDV2,
  isLidUser,
  jidNormalizedUser,
  type UserFacingSocketConfig,
  type WAMessage,
  type WASocket,
} from "@whiskeysockets/baileys";
import type {
  AuthorizeResult,
  DownloadTimers,
  GatewayEvent,
  InboundMessage,
  OutboundMessage,
  PluginContext,
  SendResult,
  TransportHealth,
} from "../../src/plugin-api/index.js";
import { credentialsDir, openAuthState, removeAuthState, type WhatsappAuth } from "./auth-state.js";
import { authorizeSender, ownerLines } from "./authorize-sender.js";
import { baileysLogger } from "./baileys-logger.js";
import { BoundedSet } from "./bounded-set.js";
import { classifyClose } from "./classify-close.js";
import type { WhatsappConfig } from "./config.js";
import { endSocket } from "./end-socket.js";
import { quietLibsignal } from "./libsignal-console.js";
import { type LinkState, linkHealth } from "./link-health.js";
import { sendWhatsapp } from "./send.js";
import { stageMedia } from "./stage-media.js";
import { type AccountView, e164, toInbound } from "./to-inbound.js";

/**
 * The WhatsApp link of a running gateway: one Baileys socket at a time, its reconnects, inbound messages and
 * presence. Contract:
 * - at most one socket exists per instance; a second `start` does not open another, and a socket replaced by a
 *   reconnect is ended and its late events are ignored (a generation counter);
 * - a close is decided by `classifyClose`: transient closes reconnect after a jittered backoff, unbounded in
 *   time; 401/403/411 (credentials no good) and 440 (replaced) call `context.fail` with a fatal error that says
 *   what to do; a logged-out device's credentials are removed, so `clawdis login` starts afresh;
 * - inbound messages are handled one at a time, in order; `authorize` runs before anything costs: a stranger's
 *   message gets no download, no read receipt, nothing handed in; a read receipt is sent only for a message the
 *   gateway accepted;
 * - presence: "composing" from `turn-start` (renewed every 10 s) to `turn-end`, then "paused", however the turn
 *   ended;
 * - `health()` is `ok` ("linked") only while the socket is open; otherwise `starting` (connecting) or `down`
 *   (reconnecting), so the gateway keeps replies in its outbox until the link is back.
 */

export type MakeSocket = (config: UserFacingSocketConfig) => WASocket;

export interface ConnectionDeps {
  makeSocket?: MakeSocket;
  /** The jitter source of the reconnect backoff. */
  random?: () => number;
  now?: () => number;
  /** The media download deadline's timers (a manual clock in tests). */
  timers?: DownloadTimers;
}

/** "composing" lasts about 25 s on the other side; renew it well before. */
const PRESENCE_RENEW_MS = 10_000;
/** How many inbound messages are kept to quote in replies. */
const QUOTABLE_LIMIT = 500;
/** How many sent message ids are remembered (the self-chat shows them again). */
const SENT_LIMIT = 2_000;
/** How many handled message ids are remembered to drop a redelivery before it costs anything. */
const SEEN_LIMIT = 5_000;

export class WhatsappConnection {
  private auth: WhatsappAuth | undefined;
  private starting: Promise<void> | undefined;
  private sock: WASocket | undefined;
  private generation = 0;
  private state: LinkState = { kind: "idle" };
  /** Whether the owner line was logged (once per run, at the first link). */
  private ownerSaid = false;
  private reconnectTimer: NodeJS.Timeout | undefined;
  private me: AccountView | undefined;
  private inbox: Promise<void> = Promise.resolve();
  private readonly sent = new BoundedSet(SENT_LIMIT);
  private readonly seen = new BoundedSet(SEEN_LIMIT);
  private readonly inFlight = new Set<string>();
  private readonly quotable = new Map<string, WAMessage>();
  private readonly typing = new Map<string, { chatId: string; timer: NodeJS.Timeout }>();
  private readonly makeSocket: MakeSocket;
  private readonly random: () => number;
  private readonly now: () => number;
  private readonly timers: DownloadTimers | undefined;
  private readonly mentionPatterns: RegExp[];

  constructor(
    private readonly context: PluginContext<WhatsappConfig>,
    deps: ConnectionDeps = {},
  ) {
    this.makeSocket = deps.makeSocket ?? makeWASocket;
    this.random = deps.random ?? Math.random;
    this.now = deps.now ?? Date.now;
    this.timers = deps.timers;
    this.mentionPatterns = context.gatewayConfig.inbound.groupChat.mentionPatterns.map((pattern, i) => {
      try {
        return new RegExp(pattern, "i");
      } catch (error) {
        throw Object.assign(
          new Error(
            `inbound.groupChat.mentionPatterns[${i}] is not a regular expression (${(error as Error).message}); fix it and restart`,
          ),
          { fatal: true },
        );
      }
    });
  }

  /**
   * Opens the credentials and the socket; resolves once the socket is connecting (not when it is open). Calls
   * that overlap share one start: never two sockets.
   */
  start(signal: AbortSignal): Promise<void> {
    this.starting ??= this.open(signal);
    return this.starting;
  }

  private async open(signal: AbortSignal): Promise<void> {
    quietLibsignal((line) => this.context.logger.debug(`libsignal: ${line}`));
    const dir = credentialsDir(this.context.stateDir);
    const auth = await openAuthState(dir, { now: this.now }).catch((error: unknown) => {
      // A corrupt creds.json: a restart cannot fix it (the message names the file and the fix).
      throw Object.assign(new Error((error as Error).message, { cause: error }), { fatal: true });
    });
    signal.throwIfAborted();
    const me = auth.state.creds.me;
    if (!me?.id) {
      throw Object.assign(
        new Error(
          // `clawdis login` needs the state directory the gateway holds: stop, log in, start.
          "WhatsApp is not linked — stop the gateway, run `clawdis login`, start it",
        ),
        { fatal: true },
      );
    }
    this.auth = auth;
    this.me = {
      phoneJid: jidNormalizedUser(me.id),
      ...(me.lid ? { lidJid: jidNormalizedUser(me.lid) } : {}),
    };
    this.connect(0);
  }

  /** Ends the socket and every timer; waits for the credential writes. */
  async stop(): Promise<void> {
    this.state = { kind: "stopped" };
    this.generation += 1;
    clearTimeout(this.reconnectTimer);
    for (const { timer } of this.typing.values()) clearInterval(timer);
    this.typing.clear();
    const sock = this.sock;
    this.sock = undefined;
    if (sock) endSocket(sock);
    await this.inbox.catch(() => {});
    await this.auth?.flush();
  }

  /** The account's own E.164 number, once started. */
  get ownNumber(): string | undefined {
    return e164(this.me?.phoneJid);
  }

  authorize(message: InboundMessage): AuthorizeResult {
    const inbound = this.context.gatewayConfig.inbound;
    return authorizeSender(
      {
        allowFrom: inbound.allowFrom,
        owners: inbound.owner[this.context.id],
        ownNumber: this.ownNumber,
        senderIsLid: isLidUser(message.senderId) === true,
      },
      message,
    );
  }

  health(): TransportHealth {
    return linkHealth(this.state, this.now, this.auth, this);
  }

  async send(message: OutboundMessage, signal: AbortSignal): Promise<SendResult> {
    const sock = this.sock;
    if (!sock || this.state.kind !== "open") {
      throw new Error(`WhatsApp is not connected (${this.health().detail ?? "down"}); the reply waits`);
    }
    return sendWhatsapp(
      {
        sender: sock,
        newMessageId: () => generateMessageIDV2(sock.user?.id),
        remember: (id) => this.sent.add(id),
        quotable: (id) => this.quotable.get(id),
      },
      message,
      signal,
    );
  }

  /** Presence from the turn lifecycle of this transport's chats. */
  onGatewayEvent(event: GatewayEvent): void {
    if (event.type === "turn-start" && event.channel === this.context.id) {
      const compose = () => this.presence("composing", event.chatId);
      compose();
      const timer = setInterval(compose, PRESENCE_RENEW_MS);
      timer.unref();
      this.typing.set(event.turnId, { chatId: event.chatId, timer });
    } else if (event.type === "turn-end" && event.channel === this.context.id) {
      const typing = this.typing.get(event.turnId);
      if (typing) clearInterval(typing.timer);
      this.typing.delete(event.turnId);
      this.presence("paused", event.chatId);
    }
  }

  private presence(kind: "composing" | "paused", chatId: string): void {
    const sock = this.sock;
    if (!sock || this.state.kind !== "open") return;
    sock.sendPresenceUpdate(kind, chatId).catch((error: unknown) => {
      this.context.logger.debug(`presence ${kind} not sent`, { chatId, error: String(error) });
    });
  }

  private connect(attempt: number): void {
    const auth = this.auth;
    if (!auth || this.state.kind === "stopped" || this.state.kind === "failed") return;
    if (this.sock) endSocket(this.sock);
    const generation = ++this.generation;
    this.state = { kind: "connecting", attempt };
    const socketUrl = this.context.config.socketUrl;
    const sock = this.makeSocket({
      auth: auth.state,
      logger: baileysLogger(this.context.logger),
      markOnlineOnConnect: false,
      syncFullHistory: false,
      shouldSyncHistoryMessage: () => false,
      emitOwnEvents: true,
      ...(socketUrl ? { waWebSocketUrl: socketUrl } : {}),
    });
    this.sock = sock;
    const current = () => generation === this.generation;
    sock.ev.on("creds.update", () => {
      auth.saveCreds().catch((error: unknown) => {
        this.context.logger.error("the WhatsApp credentials could not be saved", { error: String(error) });
      });
    });
    sock.ev.on("connection.update", (update) => {
      if (current()) this.onConnectionUpdate(update, attempt);
    });
    sock.ev.on("messages.upsert", (upsert) => {
      if (!current()) return;
      this.inbox = this.inbox
        .then(() => this.onUpsert(upsert, sock))
        .catch((error: unknown) => {
          this.context.logger.error("an inbound WhatsApp message could not be handled", {
            error: String(error),
          });
        });
    });
  }

  private onConnectionUpdate(update: Partial<ConnectionState>, attempt: number): void {
    if (update.connection === "open") {
      this.state = { kind: "open", since: this.now() };
      this.context.logger.info(`WhatsApp linked as ${this.ownNumber ?? "?"}`);
      if (!this.ownerSaid) {
        this.ownerSaid = true;
        const lines = ownerLines(this.ownNumber, this.context.gatewayConfig.inbound.owner[this.context.id]);
        for (const line of lines) this.context.logger[line.level](line.text);
      }
      return;
    }
    if (update.connection !== "close") return;
    const error = update.lastDisconnect?.error as
      | { output?: { statusCode?: number }; message?: string }
      | undefined;
    const statusCode = error?.output?.statusCode;
    const nextAttempt = this.state.kind === "open" ? 0 : attempt;
    const decision = classifyClose(statusCode, nextAttempt, this.random());
    this.sock = undefined;
    if (decision.action === "reconnect") {
      this.state = {
        kind: "reconnecting",
        attempt: nextAttempt + 1,
        at: this.now() + decision.delayMs,
        reason: decision.reason,
      };
      this.context.logger.warn(
        `WhatsApp connection closed (${decision.reason}); reconnecting in ${decision.delayMs} ms`,
        {
          statusCode,
        },
      );
      clearTimeout(this.reconnectTimer);
      this.reconnectTimer = setTimeout(() => this.connect(nextAttempt + 1), decision.delayMs);
      return;
    }
    this.state = { kind: "failed", message: decision.message };
    this.generation += 1;
    const fail = () =>
      this.context.fail(Object.assign(new Error(decision.message), { fatal: true, statusCode }));
    if (decision.reason === "logged out" && this.auth) {
      const dir = credentialsDir(this.context.stateDir);
      void this.auth
        .flush()
        .then(() => removeAuthState(dir))
        .then(
          () => this.context.logger.warn(`WhatsApp logged this device out; removed ${dir}`),
          (removeError: unknown) =>
            this.context.logger.error(`could not remove ${dir}`, { error: String(removeError) }),
        )
        .finally(fail);
      return;
    }
    fail();
  }

  private async onUpsert(upsert: BaileysEventMap["messages.upsert"], sock: WASocket): Promise<void> {
    if (upsert.type !== "notify" && upsert.type !== "append") return;
    for (const msg of upsert.messages) await this.onMessage(msg, sock);
  }

  private async onMessage(msg: WAMessage, sock: WASocket): Promise<void> {
    const me = this.me;
    const id = msg.key?.id;
    if (!me || !id || this.seen.has(id) || this.inFlight.has(id)) return;
    const phones = await this.lidPhones(msg, sock);
    const result = toInbound(msg, {
      channel: this.context.id,
      me,
      mentionPatterns: this.mentionPatterns,
      phoneForLid: (lid) => phones.get(lid),
      sentByUs: (messageId) => this.sent.has(messageId),
      receivedAt: this.now(),
    });
    if (!result.ok) {
      this.context.logger.debug(`WhatsApp message ${id} is not input: ${result.skip}`);
      return;
    }
    const verdict = this.authorize(result.message);
    if (!verdict.allowed) {
      this.context.logger.debug(`WhatsApp message ${id} not taken: ${verdict.reason}`);
      return;
    }
    this.inFlight.add(id);
    try {
      const inbound = result.media
        ? {
            ...result.message,
            attachments: [await stageMedia(msg, result.media, sock, this.context, this.timers)],
          }
        : result.message;
      this.remember(id, msg);
      const received = await this.context.receive(inbound);
      if (received.status !== "denied") this.seen.add(id);
      if (received.status === "accepted" && msg.key) {
        await sock.readMessages([msg.key]).catch((error: unknown) => {
          this.context.logger.debug(`read receipt for ${id} not sent`, { error: String(error) });
        });
      }
    } finally {
      this.inFlight.delete(id);
    }
  }

  /** Phone JIDs of the LID senders of `msg` that carry no alt JID, from the socket's mapping. */
  private async lidPhones(msg: WAMessage, sock: WASocket): Promise<Map<string, string>> {
    const phones = new Map<string, string>();
    const key = msg.key;
    const candidates = [key?.participant, key?.remoteJid].filter(
      (jid): jid is string => typeof jid === "string" && isLidUser(jid) === true,
    );
    for (const jid of candidates) {
      const lid = jidNormalizedUser(jid);
      const pn = await sock.signalRepository.lidMapping.getPNForLID(lid).catch(() => null);
      if (pn) phones.set(lid, jidNormalizedUser(pn));
    }
    return phones;
  }

  private remember(id: string, msg: WAMessage): void {
    this.quotable.delete(id);
    this.quotable.set(id, msg);
    for (const oldest of this.quotable.keys()) {
      if (this.quotable.size <= QUOTABLE_LIMIT) break;
      this.quotable.delete(oldest);
    }
  }
}
