// Over 400 lines: one state machine (lanes, parking, retries, spilling, stop) whose steps share the lane state;
// its pure parts live beside it (outbox-parts.ts, outbox-retry.ts, outbox-status.ts, outbox-spill.ts).
import { join } from "node:path";
import type { Clock } from "../core/clock.js";
import { describeError } from "../core/errors.js";
import { formatDuration } from "../core/format.js";
import type { Logger } from "../core/logger.js";
import type { OutboundMessage, Transport } from "../plugin-api/types.js";
import type { Journal } from "../sessions/journal.js";
import type { Delivery, Handed, Lane, ParkedReport, Queued, Undeliverable } from "./delivery.js";
import { type Part, planParts } from "./outbox-parts.js";
import { afterSendFailure, logsRetry } from "./outbox-retry.js";
import { OutboxWaits } from "./outbox-waits.js";
import { routeConfirmation } from "./send-thread/confirm-routes.js";
import type { SendThread } from "./send-thread/send-thread.js";
import { SpilledDeliveries } from "./spilled-deliveries.js";

export type { Delivery, Handed, ParkedReport, Undeliverable } from "./delivery.js";
export { splitFor } from "./outbox-parts.js";

/** How long one send may take before it is aborted. */
export const SEND_TIMEOUT_MS = 30_000;
/** What waiting deliveries may hold in memory (default); beyond it they wait on disk (the spill folder). */
export const MAX_PARKED_BYTES = 32 * 1024 * 1024;
/** How many replies given up for good `undeliverable()` remembers (newest last). */
export const UNDELIVERABLE_KEPT = 20;

export interface OutboxDeps {
  /** The transport of `channel` when it is up (ok or degraded), else undefined. */
  transport(channel: string): Transport | undefined;
  journal: Journal;
  clock: Clock;
  logger: Logger;
  /** Parked deliveries older than this are reported in the log (once per episode) and in `/status`. */
  warnAfterMs: number;
  /** What waiting deliveries may hold in memory; default MAX_PARKED_BYTES. */
  maxParkedBytes?: number;
  /** Where deliveries past that bound wait; default `outbox-spill` beside the journal's file. */
  spillDir?: string;
  /**
   * The send thread, when it runs: a transport that sends through `confirmingFetch` has the thread write a part's
   * records the moment its chat app takes it (runtime/send-thread/).
   */
  sendThread?: () => SendThread | undefined;
}

/**
 * Delivery that never drops a reply (issue 7). Contract:
 * - Each chat (channel + chat id) is a FIFO lane: what is handed in is sent in that order, one at a time.
 * - While the chat's transport is not up, its lane is parked: nothing is sent, nothing is ended, the journal
 *   record stays open (so a restart delivers it too); `wake(channel)` sends what waits, in order, once.
 * - A reply is sent as the parts `planParts` makes (its text split for the transport, each file a part of its
 *   own); each part of a reply of several parts is recorded in the journal as it is delivered, before the next
 *   one is sent, and parts delivered before a restart are skipped: every part reaches the chat once.
 * - A failed send is tried again, the same part, for as long as it takes (`afterSendFailure`: after the error's
 *   `retryAfterMs`, else a backoff to 30 s), the lane waiting meanwhile; a send that goes through on a channel
 *   ends the backoff (not a rate limit's wait) of its other lanes, so they try again at once after an outage. A
 *   send failing because the transport went down parks the lane. Only a failure its transport marks `permanent` (the chat is gone, the bot blocked)
 *   gives the delivery up: an error log naming the chat and why, `undeliverable()`, and its record ends
 *   `failed-told`.
 * - Waiting deliveries are bounded in memory (`maxParkedBytes`): past the bound they wait on disk (SpillStore)
 *   and are sent in their turn by this process. Only one that cannot be written there is not held (logged; a
 *   reply's record stays open and the next start sends it).
 * - `stop()` ends the lanes: what waits stays in the journal for the next start (notices are dropped).
 * - `holdUntil(warm)`: no send starts before `warm` settles (whichever way). The gateway holds the first sends of a
 *   start until the modules it loads lazily are loaded: their compilation holds the event loop for a few hundred
 *   milliseconds, and a chat app's answer that arrives meanwhile is not read, so a crash then would send that part
 *   again (the part is recorded delivered only once its answer has been read).
 */
export class Outbox {
  private readonly lanes = new Map<string, Lane>();
  private parkedBytes = 0;
  private stopped = false;
  private warnTimer: unknown;
  private readonly waits: OutboxWaits;
  private readonly spill: SpilledDeliveries;
  private readonly givenUp: Undeliverable[] = [];
  /** Settles when sends may start (`holdUntil`); never rejects. */
  private held: Promise<void> = Promise.resolve();

  constructor(private readonly deps: OutboxDeps) {
    this.waits = new OutboxWaits(deps.clock);
    this.spill = new SpilledDeliveries(
      deps.spillDir ?? join(deps.journal.filePath, "..", "outbox-spill"),
      deps.logger,
      deps.maxParkedBytes ?? MAX_PARKED_BYTES,
    );
  }

  /** No send starts before `warm` settles, fulfilled or rejected (see the class comment). */
  holdUntil(warm: Promise<unknown>): void {
    this.held = warm.then(
      () => {},
      () => {},
    );
  }

  /**
   * Hands a delivery in. Resolves once it is sent, or is waiting (its transport down, a failed send to be tried
   * again, or behind others), or was given up: never later than that, so a session never waits on a transport
   * that is down.
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
    const overBound =
      parked && this.parkedBytes + delivery.text.length > (this.deps.maxParkedBytes ?? MAX_PARKED_BYTES);
    const queued = this.queued(delivery, overBound);
    lane.queue.push(queued.entry);
    if (overBound || lane.parkedSince !== undefined || lane.backingOff) queued.entry.handed("waiting");
    if (!lane.running) void this.run(key, lane);
    return queued.handed;
  }

  /** The queue entry of a delivery: held in memory, or (past the bound) written to the spill folder. */
  private queued(delivery: Delivery, spill: boolean): { entry: Queued; handed: Promise<Handed> } {
    let resolve!: (how: Handed) => void;
    const handed = new Promise<Handed>((r) => {
      resolve = r;
    });
    let done = false;
    const finish = (how: Handed) => {
      if (done) return;
      done = true;
      resolve(how);
    };
    if (!spill) {
      this.parkedBytes += delivery.text.length;
      return { entry: { delivery, bytes: delivery.text.length, handed: finish }, handed };
    }
    const { stub, spilled } = this.spill.put(delivery);
    return { entry: { delivery: stub, spilled, bytes: 0, handed: finish }, handed };
  }

  /** The transport of `channel` came up: its parked lanes send now. */
  wake(channel: string): void {
    this.waits.wake(channel);
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

  /** The newest deliveries given up because their chat refused them for good (at most UNDELIVERABLE_KEPT). */
  undeliverable(): readonly Undeliverable[] {
    return [...this.givenUp];
  }

  /**
   * Resolves when every lane is either empty or parked (nothing is being sent to a transport that is up), or
   * after `maxMs` of real time: a stop lets the sends in flight finish first.
   */
  settle(maxMs: number): Promise<void> {
    return this.waits.waitFor(() => this.isSettled(), maxMs);
  }

  private isSettled(): boolean {
    for (const lane of this.lanes.values()) {
      if (lane.running && lane.parkedSince === undefined && !lane.backingOff) return false;
    }
    return true;
  }

  /**
   * Stops every lane; parked and unsent deliveries stay in the journal (replies) or are dropped (notices).
   * Resolves once no lane runs any more — a send in flight finishes and its journal record is ended first, so a
   * reply that reached the chat is never sent again after the restart — or after `maxMs` of real time.
   */
  stop(maxMs = SEND_TIMEOUT_MS): Promise<void> {
    this.stopped = true;
    if (this.warnTimer !== undefined) this.deps.clock.clearTimeout(this.warnTimer);
    this.waits.cutAll();
    return this.waits.waitFor(() => ![...this.lanes.values()].some((lane) => lane.running), maxMs);
  }

  private async run(key: string, lane: Lane): Promise<void> {
    lane.running = true;
    try {
      for (;;) {
        const head = lane.queue[0];
        if (head === undefined || this.stopped) break;
        const delivery = await this.restore(head);
        const how = delivery ? await this.deliver(lane, delivery) : "dropped";
        lane.queue.shift();
        this.parkedBytes -= head.bytes;
        head.handed(how);
      }
    } finally {
      for (const queued of lane.queue) {
        queued.handed("dropped");
        // What it holds on disk goes (its reply stays in the journal).
        void this.spill.discard(queued.spilled);
      }
      lane.running = false;
      if (lane.queue.length === 0) this.lanes.delete(key);
      this.waits.changed();
    }
  }

  /** The delivery of a queue entry, read back from disk when it was spilled; undefined when it cannot be. */
  private async restore(queued: Queued): Promise<Delivery | undefined> {
    if (!queued.spilled) return queued.delivery;
    const name = await queued.spilled;
    queued.spilled = Promise.resolve(undefined);
    return this.spill.take(name, queued.delivery);
  }

  /** Sends one delivery (waiting while its transport is down); never throws. */
  private async deliver(lane: Lane, delivery: Delivery): Promise<Handed> {
    await this.held;
    let parts: Part[] | undefined;
    /** The records' end, once the last part went through (written in `record` below, or after the loop). */
    let ended: Promise<void> | undefined;
    for (let index = 0; ; ) {
      // Every part sent: the record is ended below, also when the outbox is stopping meanwhile.
      if (parts !== undefined && index >= parts.length) break;
      const transport = await this.upTransport(lane, delivery.channel);
      if (!transport) return "dropped"; // stopped: the journal keeps the reply for the next start
      parts ??= planParts(delivery, transport);
      // A single part needs no record of its own: the journal's `end` follows it.
      const recordParts = delivery.jid !== undefined && parts.length > 1;
      if (index >= parts.length) break;
      if (recordParts && delivery.deliveredParts?.includes(index)) {
        index++;
        continue;
      }
      // The part's record, written once, before anything else on this lane: a crash from then on must not send
      // it again. The last part ends the records; an earlier one is marked delivered. It is written the moment the
      // transport says its chat app took the part (`Transport.send`'s `confirmed`), else once the send resolves.
      const part = index;
      const last = part === parts.length - 1;
      let recorded: Promise<void> | undefined;
      const record = () => {
        if (last) recorded ??= ended = this.endRecords(delivery, "replied");
        else if (recordParts && delivery.jid) recorded ??= this.markDelivered(delivery.jid, part);
        return recorded;
      };
      // The same records as journal lines, for the send thread to write first; made only when a transport sends
      // through it (confirmingFetch). Undefined: the part has no record of its own.
      const jid = delivery.jid;
      const lines =
        jid === undefined || !(last || recordParts)
          ? undefined
          : () =>
              last
                ? this.deps.journal.endLines(endsOf(delivery), "replied", this.deps.clock.now())
                : this.deps.journal.deliveredLine(jid, part, this.deps.clock.now());
      const sent = await this.sendPart(lane, delivery, parts[index]!, record, lines);
      if (sent === "down") continue; // parked again: same part once the transport is back
      if (sent === "stopped") return "dropped";
      if (sent === "gave-up") return "failed";
      record();
      await recorded;
      index++;
    }
    await (ended ?? this.endRecords(delivery, "replied"));
    return "sent";
  }

  private markDelivered(jid: string, part: number): Promise<void> {
    return this.deps.journal
      .markDelivered(jid, part, this.deps.clock.now())
      .catch((error: unknown) =>
        this.deps.logger.warn("could not record a delivered part", { error: describeError(error) }),
      );
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
      this.waits.changed();
      await this.waits.parked(channel);
    }
  }

  /**
   * Sends one part until it is through ("sent"), its transport is not up ("down": the caller parks and sends
   * the same part later), the chat refuses it for good ("gave-up": logged, listed, records ended) or the outbox
   * stops ("stopped"). Each try uses the transport up at that moment (a restarted plugin's new instance).
   * `confirmed` is the transport's to call the moment its chat app took the part; from then on the part counts as
   * sent, whatever the send does after it.
   */
  private async sendPart(
    lane: Lane,
    delivery: Delivery,
    part: Part,
    confirmed: () => Promise<void> | undefined,
    lines: (() => string) | undefined,
  ): Promise<"sent" | "down" | "gave-up" | "stopped"> {
    let taken = false;
    // `confirmed` (deliver's `record`) writes the record once however often it is called.
    const onConfirmed = () => {
      taken = true;
      confirmed();
    };
    const thread = this.deps.sendThread?.();
    if (thread && lines) {
      routeConfirmation(onConfirmed, { thread, lines, recorded: () => confirmed() ?? Promise.resolve() });
    }
    const message: OutboundMessage = {
      channel: delivery.channel,
      chatId: delivery.chatId,
      text: part.text,
      kind: delivery.kind,
      ...(delivery.chatType ? { chatType: delivery.chatType } : {}),
      ...(part.quote && delivery.replyToMessageId ? { replyToMessageId: delivery.replyToMessageId } : {}),
      ...(part.attachment ? { attachments: [part.attachment] } : {}),
      // Buttons go with the text (a prompt is one part); the close with every part.
      ...(delivery.buttons && part.text ? { buttons: delivery.buttons } : {}),
      ...(delivery.closesButtons ? { closesButtons: true } : {}),
    };
    for (let attempt = 1; ; attempt++) {
      const transport = this.deps.transport(delivery.channel);
      if (!transport) return "down";
      try {
        await transport.send(message, AbortSignal.timeout(SEND_TIMEOUT_MS), onConfirmed);
        this.waits.sendsPass(delivery.channel);
        return "sent";
      } catch (error) {
        if (taken) {
          // The chat app has it: sending it again would show it twice.
          this.deps.logger.warn("a send failed after its chat app took the message; it counts as delivered", {
            channel: delivery.channel,
            chatId: delivery.chatId,
            error: describeError(error),
          });
          return "sent";
        }
        if (!this.deps.transport(delivery.channel)) {
          this.deps.logger.warn("send failed while the transport went down; the reply waits for it", {
            channel: delivery.channel,
            chatId: delivery.chatId,
            error: describeError(error),
          });
          lane.parkedSince ??= this.deps.clock.now();
          return "down";
        }
        const next = afterSendFailure(error, attempt);
        if (next.action === "give-up") {
          await this.giveUp(delivery, next.reason);
          return "gave-up";
        }
        if (logsRetry(attempt)) {
          this.deps.logger.warn("send failed; trying again until it goes through", {
            channel: delivery.channel,
            chatId: delivery.chatId,
            attempt,
            retryInMs: next.waitMs,
            error: describeError(error),
          });
        }
        lane.backingOff = true;
        for (const queued of lane.queue) queued.handed("waiting");
        this.waits.changed();
        await this.waits.backoff(next.hinted ? undefined : delivery.channel, next.waitMs);
        lane.backingOff = false;
        if (this.stopped) return "stopped";
      }
    }
  }

  /** A chat refused a delivery for good: the log and `/status` say which chat and why; its records end. */
  private async giveUp(delivery: Delivery, reason: string): Promise<void> {
    const why = `the chat refused it: ${reason}`;
    this.deps.logger.error(
      `a ${delivery.kind} to ${delivery.channel} chat ${delivery.chatId} cannot be delivered (${reason}); given up`,
      { channel: delivery.channel, chatId: delivery.chatId },
    );
    this.givenUp.push({
      channel: delivery.channel,
      chatId: delivery.chatId,
      kind: delivery.kind,
      reason,
      at: this.deps.clock.now(),
    });
    if (this.givenUp.length > UNDELIVERABLE_KEPT) this.givenUp.shift();
    await this.endRecords(delivery, "failed-told", why);
  }

  private async endRecords(
    delivery: Delivery,
    outcome: "replied" | "failed-told",
    why?: string,
  ): Promise<void> {
    if (!delivery.jid) return;
    const now = this.deps.clock.now();
    // All at once: each record is written as it is handed to the journal (its fsync is shared), so a crash after
    // this reply reached its chat finds every message it answered ended, not only the first.
    await Promise.all(
      endsOf(delivery, why).map(({ jid, reason }) =>
        this.deps.journal
          .end(jid, outcome, now, reason)
          .catch((error: unknown) =>
            this.deps.logger.warn("could not end a journal record", { error: describeError(error) }),
          ),
      ),
    );
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

/** The records a delivery ends: its own, and those of the messages it also answered (`alsoEnd`). */
function endsOf(delivery: Delivery, why?: string): { jid: string; reason?: string | undefined }[] {
  if (!delivery.jid) return [];
  return [
    { jid: delivery.jid, reason: why },
    ...(delivery.alsoEnd ?? []).map((jid) => ({ jid, reason: why ?? `answered with ${delivery.jid}` })),
  ];
}

/**
 * The memory bound from `CLAWDIS_OUTBOX_MEMORY_BYTES` (a whole number of bytes), else undefined (the default,
 * MAX_PARKED_BYTES). A value that is not a positive whole number is ignored.
 */
export function maxParkedBytesFrom(env: Readonly<Record<string, string | undefined>>): number | undefined {
  const raw = env.CLAWDIS_OUTBOX_MEMORY_BYTES;
  if (raw === undefined || !/^\d+$/.test(raw.trim())) return undefined;
  const bytes = Number(raw.trim());
  return Number.isSafeInteger(bytes) && bytes > 0 ? bytes : undefined;
}
