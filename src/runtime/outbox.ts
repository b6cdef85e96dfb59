import type { Clock } from "../core/clock.js";
import { describeError } from "../core/errors.js";
import { formatDuration } from "../core/format.js";
import type { Logger } from "../core/logger.js";
import type { OutboundAttachment, OutboundMessage, Transport } from "../plugin-api/types.js";
import { splitText } from "../routing/split-text.js";
import type { Journal } from "../sessions/journal.js";

/** How long one send may take before it is aborted. */
export const SEND_TIMEOUT_MS = 30_000;
/** Tries of one part while its transport is up, before the delivery is given up (and logged). */
export const SEND_ATTEMPTS = 5;
/** What parked deliveries may hold in memory; beyond it they wait in the journal for the next start. */
export const MAX_PARKED_BYTES = 32 * 1024 * 1024;
/** A parked lane also looks again this often (a transport's health can come back without a state change). */
export const PARK_POLL_MS = 1000;

/** One reply or notice on its way to a chat. */
export interface Delivery {
  channel: string;
  chatId: string;
  chatType?: "direct" | "group";
  text: string;
  kind: "reply" | "notice";
  replyToMessageId?: string;
  attachments?: OutboundAttachment[];
  /**
   * The journal record this delivery completes (a reply). Its parts are recorded as they reach the chat (so a
   * restart sends only the rest), and the record (with `alsoEnd`, the messages that joined the turn) is ended
   * `replied` after the last one.
   */
  jid?: string;
  alsoEnd?: string[];
  /** Parts that reached the chat before a restart. */
  deliveredParts?: readonly number[];
}

export interface OutboxDeps {
  /** The transport of `channel` when it is up (ok or degraded), else undefined. */
  transport(channel: string): Transport | undefined;
  journal: Journal;
  clock: Clock;
  logger: Logger;
  /** Parked deliveries older than this are reported in the log (once per episode) and in `/status`. */
  warnAfterMs: number;
}

/** How far a delivery got when `enqueue` resolves. */
export type Handed = "sent" | "waiting" | "failed" | "dropped";

interface Queued {
  delivery: Delivery;
  /** Resolves `enqueue`'s promise; called once. */
  handed(how: Handed): void;
}

interface Lane {
  queue: Queued[];
  running: boolean;
  /** Since when the head of the lane has waited for its transport (undefined: not parked). */
  parkedSince?: number;
  /** Waiting out a retry delay after a failed send (nothing in flight). */
  backingOff?: boolean;
  warned?: boolean;
}

/** What `/status` shows per channel. */
export interface ParkedReport {
  channel: string;
  count: number;
  oldestMs: number;
  reported: boolean;
}

/**
 * Delivery that never drops a reply (issue 7). Contract:
 * - Each chat (channel + chat id) is a FIFO lane: what is handed in is sent in that order, one at a time.
 * - While the chat's transport is not up, its lane is parked: nothing is sent, nothing is ended, the journal
 *   record stays open (so a restart delivers it too); `wake(channel)` sends what waits, in order, once.
 * - A reply is split by the transport's own `split` or fence-aware to its `maxTextLength`; each part of a
 *   split reply is recorded in the journal when delivered, and parts delivered before a restart are skipped.
 * - A failed send while the transport is up is tried again (honouring an error's `retryAfterMs`), up to
 *   SEND_ATTEMPTS times; then the delivery is given up with an error log and its record ends `failed-told`.
 * - Parked deliveries are bounded in memory (MAX_PARKED_BYTES): a reply past the bound is not held (logged; its
 *   record stays open and the next start sends it), a notice past it is dropped (logged).
 * - `stop()` ends the lanes: what waits stays in the journal for the next start.
 */
export class Outbox {
  private readonly lanes = new Map<string, Lane>();
  private readonly wakers = new Map<string, Set<() => void>>();
  private parkedBytes = 0;
  private stopped = false;
  private warnTimer: unknown;
  private readonly settleWaiters = new Set<() => void>();
  /** Retry delays in progress, cut short by `stop()`. */
  private readonly stopWaiters = new Set<() => void>();

  constructor(private readonly deps: OutboxDeps) {}

  /**
   * Hands a delivery in. Resolves once it is sent, or is waiting (its transport down, or a failed send to be
   * tried again), or was given up: never later than that, so a session never waits on a transport that is down.
   */
  enqueue(delivery: Delivery): Promise<Handed> {
    if (this.stopped) return Promise.resolve("dropped");
    const key = `${delivery.channel}\u0000${delivery.chatId}`;
    let lane = this.lanes.get(key);
    if (!lane) {
      lane = { queue: [], running: false };
      this.lanes.set(key, lane);
    }
    const parked = !this.deps.transport(delivery.channel) || lane.queue.length > 0;
    if (parked && this.parkedBytes + delivery.text.length > MAX_PARKED_BYTES) {
      this.deps.logger.error(
        delivery.jid
          ? "too many replies wait for their transport: this one is kept in the journal and sent after the next start"
          : "too many replies wait for their transport: a notice was dropped",
        { channel: delivery.channel, chatId: delivery.chatId, kind: delivery.kind },
      );
      return Promise.resolve("dropped");
    }
    this.parkedBytes += delivery.text.length;
    const handed = new Promise<Handed>((resolve) => {
      let done = false;
      lane.queue.push({
        delivery,
        handed: (how) => {
          if (done) return;
          done = true;
          resolve(how);
        },
      });
    });
    if (lane.parkedSince !== undefined || lane.backingOff) lane.queue.at(-1)!.handed("waiting");
    if (!lane.running) void this.run(key, lane);
    return handed;
  }

  /** The transport of `channel` came up: its parked lanes send now. */
  wake(channel: string): void {
    const waiting = this.wakers.get(channel);
    if (!waiting) return;
    this.wakers.delete(channel);
    for (const resume of waiting) resume();
  }

  /** Parked deliveries by channel, for `/status` and the log. */
  parked(): ParkedReport[] {
    const now = this.deps.clock.now();
    const by = new Map<string, ParkedReport>();
    for (const [key, lane] of this.lanes) {
      if (lane.parkedSince === undefined) continue;
      const channel = key.slice(0, key.indexOf("\u0000"));
      const report = by.get(channel) ?? { channel, count: 0, oldestMs: 0, reported: false };
      report.count += lane.queue.length;
      report.oldestMs = Math.max(report.oldestMs, now - lane.parkedSince);
      report.reported ||= lane.parkedSince + this.deps.warnAfterMs <= now;
      by.set(channel, report);
    }
    return [...by.values()];
  }

  /**
   * Resolves when every lane is either empty or parked (nothing is being sent to a transport that is up), or
   * after `maxMs` of real time: a stop lets the sends in flight finish first.
   */
  settle(maxMs: number): Promise<void> {
    return this.waitFor(() => this.isSettled(), maxMs);
  }

  /** Resolves once `done()` holds (checked now and on every lane change), or after `maxMs` of real time. */
  private waitFor(done: () => boolean, maxMs: number): Promise<void> {
    return new Promise((resolve) => {
      const finish = () => {
        clearTimeout(timer);
        this.settleWaiters.delete(check);
        resolve();
      };
      const check = () => {
        if (done()) finish();
      };
      const timer = setTimeout(finish, maxMs);
      timer.unref();
      this.settleWaiters.add(check);
      check();
    });
  }

  private isSettled(): boolean {
    for (const lane of this.lanes.values()) {
      if (lane.running && lane.parkedSince === undefined && !lane.backingOff) return false;
    }
    return true;
  }

  private notifySettle(): void {
    for (const waiter of [...this.settleWaiters]) waiter();
  }

  /** Stops every lane; parked and unsent deliveries stay in the journal (replies) or are dropped (notices). */
  /**
   * Stops every lane; parked and unsent deliveries stay in the journal (replies) or are dropped (notices).
   * Resolves once no lane runs any more — a send in flight finishes and its journal record is ended first, so a
   * reply that reached the chat is never sent again after the restart — or after `maxMs` of real time.
   */
  stop(maxMs = SEND_TIMEOUT_MS): Promise<void> {
    this.stopped = true;
    if (this.warnTimer !== undefined) this.deps.clock.clearTimeout(this.warnTimer);
    for (const cut of [...this.stopWaiters]) cut();
    this.stopWaiters.clear();
    for (const channel of [...this.wakers.keys()]) this.wake(channel);
    return this.waitFor(() => ![...this.lanes.values()].some((lane) => lane.running), maxMs);
  }

  private async run(key: string, lane: Lane): Promise<void> {
    lane.running = true;
    try {
      for (;;) {
        const head = lane.queue[0];
        if (head === undefined || this.stopped) break;
        const how = await this.deliver(lane, head.delivery);
        lane.queue.shift();
        this.parkedBytes -= head.delivery.text.length;
        head.handed(how);
      }
    } finally {
      for (const queued of lane.queue) queued.handed("dropped");
      lane.running = false;
      if (lane.queue.length === 0) this.lanes.delete(key);
      this.notifySettle();
    }
  }

  /** Sends one delivery (waiting while its transport is down); never throws. */
  private async deliver(lane: Lane, delivery: Delivery): Promise<Handed> {
    let parts: string[] | undefined;
    for (let index = 0; ; ) {
      // Every part sent: the record is ended below, also when the outbox is stopping meanwhile.
      if (parts !== undefined && index >= parts.length) break;
      const transport = await this.upTransport(lane, delivery.channel);
      if (!transport) return "dropped"; // stopped: the journal keeps the reply for the next start
      parts ??= splitFor(transport, textWithFileNames(delivery, transport));
      // A single part needs no record of its own: the journal's `end` follows it.
      const recordParts = delivery.jid !== undefined && parts.length > 1;
      if (index >= parts.length) break;
      if (recordParts && delivery.deliveredParts?.includes(index)) {
        index++;
        continue;
      }
      const sent = await this.sendPart(lane, delivery, transport, parts[index]!, index === parts.length - 1);
      if (sent === "down") continue; // parked again: same part once the transport is back
      if (sent === "gave-up") return "failed";
      if (recordParts && delivery.jid) {
        await this.deps.journal
          .markDelivered(delivery.jid, index, this.deps.clock.now())
          .catch((error: unknown) =>
            this.deps.logger.warn("could not record a delivered part", { error: describeError(error) }),
          );
      }
      index++;
    }
    await this.endRecords(delivery, "replied");
    return "sent";
  }

  /** The transport once it is up; while it is not, the lane is parked. Undefined when the outbox stopped. */
  private async upTransport(lane: Lane, channel: string): Promise<Transport | undefined> {
    for (;;) {
      if (this.stopped) return undefined;
      const transport = this.deps.transport(channel);
      if (transport) {
        lane.parkedSince = undefined;
        lane.warned = false;
        return transport;
      }
      lane.parkedSince ??= this.deps.clock.now();
      for (const queued of lane.queue) queued.handed("waiting");
      this.scheduleWarning();
      this.notifySettle();
      await new Promise<void>((resume) => {
        let set = this.wakers.get(channel);
        if (!set) {
          set = new Set();
          this.wakers.set(channel, set);
        }
        const once = () => {
          set.delete(once);
          this.deps.clock.clearTimeout(poll);
          resume();
        };
        const poll = this.deps.clock.setTimeout(once, PARK_POLL_MS);
        set.add(once);
      });
    }
  }

  private async sendPart(
    lane: Lane,
    delivery: Delivery,
    transport: Transport,
    text: string,
    last: boolean,
  ): Promise<"sent" | "down" | "gave-up"> {
    for (let attempt = 1; ; attempt++) {
      const message: OutboundMessage = {
        channel: delivery.channel,
        chatId: delivery.chatId,
        text,
        kind: delivery.kind,
        ...(delivery.chatType ? { chatType: delivery.chatType } : {}),
        ...(delivery.replyToMessageId ? { replyToMessageId: delivery.replyToMessageId } : {}),
        ...(last && delivery.attachments?.length && transport.capabilities.attachments
          ? { attachments: delivery.attachments }
          : {}),
      };
      try {
        await transport.send(message, AbortSignal.timeout(SEND_TIMEOUT_MS));
        return "sent";
      } catch (error) {
        if (!this.deps.transport(delivery.channel)) {
          this.deps.logger.warn("send failed while the transport went down; the reply waits for it", {
            channel: delivery.channel,
            chatId: delivery.chatId,
            error: describeError(error),
          });
          lane.parkedSince ??= this.deps.clock.now();
          return "down";
        }
        if (attempt >= SEND_ATTEMPTS) {
          const why = `could not be delivered after ${attempt} tries: ${describeError(error)}`;
          this.deps.logger.error(`a ${delivery.kind} ${why}`, {
            channel: delivery.channel,
            chatId: delivery.chatId,
          });
          await this.endRecords(delivery, "failed-told", why);
          return "gave-up";
        }
        const hinted = (error as { retryAfterMs?: unknown } | null)?.retryAfterMs;
        const wait =
          typeof hinted === "number" && hinted >= 0 ? hinted : Math.min(30_000, 500 * 2 ** (attempt - 1));
        this.deps.logger.warn("send failed; trying again", {
          channel: delivery.channel,
          chatId: delivery.chatId,
          attempt,
          retryInMs: wait,
          error: describeError(error),
        });
        lane.backingOff = true;
        for (const queued of lane.queue) queued.handed("waiting");
        this.notifySettle();
        await new Promise<void>((resume) => {
          const timer = this.deps.clock.setTimeout(resume, wait);
          this.stopWaiters.add(() => {
            this.deps.clock.clearTimeout(timer);
            resume();
          });
        });
        lane.backingOff = false;
        if (this.stopped) return "gave-up";
      }
    }
  }

  private async endRecords(
    delivery: Delivery,
    outcome: "replied" | "failed-told",
    why?: string,
  ): Promise<void> {
    if (!delivery.jid) return;
    const now = this.deps.clock.now();
    const end = async (jid: string, reason?: string) =>
      this.deps.journal
        .end(jid, outcome, now, reason)
        .catch((error: unknown) =>
          this.deps.logger.warn("could not end a journal record", { error: describeError(error) }),
        );
    await end(delivery.jid, why);
    for (const jid of delivery.alsoEnd ?? []) await end(jid, why ?? `answered with ${delivery.jid}`);
  }

  /** Logs, once per parked episode, lanes that have waited longer than `warnAfterMs`. */
  private scheduleWarning(): void {
    if (this.warnTimer !== undefined || this.stopped) return;
    this.warnTimer = this.deps.clock.setTimeout(() => {
      this.warnTimer = undefined;
      const now = this.deps.clock.now();
      let stillParked = false;
      for (const [key, lane] of this.lanes) {
        if (lane.parkedSince === undefined) continue;
        stillParked = true;
        if (lane.warned || now - lane.parkedSince < this.deps.warnAfterMs) continue;
        lane.warned = true;
        this.deps.logger.warn(
          `${lane.queue.length} ${lane.queue.length === 1 ? "reply waits" : "replies wait"} for a transport that has been down for ${formatDuration(now - lane.parkedSince)}; they are sent when it is back`,
          { channel: key.slice(0, key.indexOf("\u0000")), chatId: key.slice(key.indexOf("\u0000") + 1) },
        );
      }
      if (stillParked) this.scheduleWarning();
    }, this.deps.warnAfterMs);
  }
}

/** The transport's own split (when its rendering changes lengths), else the fence-aware split. */
export function splitFor(transport: Transport, text: string): string[] {
  const own = transport.split?.(text);
  if (own && own.length > 0) return own;
  return splitText(text, transport.capabilities.maxTextLength);
}

/** A transport that cannot send files gets their names (and where they lie) at the end of the text. */
function textWithFileNames(delivery: Delivery, transport: Transport): string {
  if (!delivery.attachments?.length || transport.capabilities.attachments) return delivery.text;
  const names = delivery.attachments.map((a) => `[file: ${a.fileName ?? a.path}]`).join("\n");
  return `${delivery.text}\n\n${names}`;
}
