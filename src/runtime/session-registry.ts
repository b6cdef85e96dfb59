import type { Clock } from "../core/clock.js";
import { describeError } from "../core/errors.js";
import type { Logger } from "../core/logger.js";
import { decideIdle, decideRelease, idleLimitMs, PASSIVATION_GRACE_MS } from "./passivation.js";
import type { TailCache } from "./tail-cache.js";

/**
 * What the gateway holds in memory for one session between its turns. Everything here can be rebuilt from disk
 * (the transcript, the store), so releasing it loses nothing: the next message loads the session again.
 */
export interface WarmSession {
  readonly key: string;
  /** Work for the session (a message queued, a turn's end) so far; the passivation compares it. */
  activity: number;
  lastActiveAt: number;
  /**
   * The resumed context tail of the session's transcript, kept up to date with what this process appends, so
   * the next turn does not read the transcript backwards again. The loop guard's saved state is in it too
   * (its `loop-guard` entries), so a turn that runs again restores its guard from memory.
   */
  tail?: TailCache;
  /** Bookkeeping still in flight (the store update after a turn): the final save waits for it. */
  readonly pending: Set<Promise<unknown>>;
}

export interface SessionRegistryDeps {
  clock: Clock;
  /** `inbound.reply.session.passivateAfterMinutes` (0: never); read at each use (it may change while running). */
  readonly passivateAfterMinutes: number;
  /** Whether the session has work queued or running (its queue lane): such a session is never released. */
  busy(key: string): boolean;
  /** The final save before release: flushes what the session holds (the transcript to disk, pending writes). */
  save(session: WarmSession): Promise<void>;
  logger: Pick<Logger, "info" | "warn">;
  graceMs?: number;
}

type Phase = "warm" | "saving" | "grace";

interface Slot {
  session: WarmSession;
  phase: Phase;
  timer: unknown;
  /** `activity` when the passivation began. */
  activityAtStart: number;
}

/**
 * The per-session registry of warm state, with passivation: `touch(key)` on each piece of work for a session
 * (it creates the entry — a load — when there is none, cancels a passivation under way, and starts the idle time
 * over); after `passivateAfterMinutes` idle, a final save, then a grace period (`PASSIVATION_GRACE_MS`) during
 * which a touch keeps the session; then the entry is dropped and its memory released. A busy session (a running
 * turn, queued work) is never released. Timers run on the injected clock.
 */
export class SessionRegistry {
  private readonly slots = new Map<string, Slot>();
  private readonly graceMs: number;
  private stopped = false;
  /** Final saves in flight. */
  private readonly saving = new Set<Promise<void>>();

  constructor(private readonly deps: SessionRegistryDeps) {
    this.graceMs = deps.graceMs ?? PASSIVATION_GRACE_MS;
  }

  /** The idle limit, read at each use: `deps.passivateAfterMinutes` may change while the gateway runs. */
  private get idleMs(): number | undefined {
    return idleLimitMs(this.deps.passivateAfterMinutes);
  }

  /** Work for `key`: its warm state (loaded afresh when it was released), kept warm from now on for the idle time. */
  touch(key: string): WarmSession {
    let slot = this.slots.get(key);
    if (!slot) {
      const session: WarmSession = { key, activity: 0, lastActiveAt: 0, pending: new Set() };
      slot = { session, phase: "warm", timer: undefined, activityAtStart: 0 };
      this.slots.set(key, slot);
    }
    slot.session.activity++;
    slot.session.lastActiveAt = this.deps.clock.now();
    slot.phase = "warm";
    this.schedule(key, slot);
    return slot.session;
  }

  /** The warm state of `key`, if it is held (does not count as work). */
  peek(key: string): WarmSession | undefined {
    return this.slots.get(key)?.session;
  }

  /** How many sessions are held warm. */
  get size(): number {
    return this.slots.size;
  }

  /** Resolves when no final save is in flight (a stop waits for them; tests wait for the grace period to begin). */
  async settled(): Promise<void> {
    while (this.saving.size > 0) await Promise.allSettled([...this.saving]);
  }

  /** Clears every timer (gateway stop); what is held is left as it is (everything is on disk). */
  stop(): void {
    this.stopped = true;
    for (const slot of this.slots.values()) this.clear(slot);
  }

  private clear(slot: Slot): void {
    if (slot.timer !== undefined) this.deps.clock.clearTimeout(slot.timer);
    slot.timer = undefined;
  }

  private schedule(key: string, slot: Slot): void {
    this.clear(slot);
    if (this.stopped) return;
    const decision = decideIdle({
      idleMs: this.idleMs,
      busy: this.deps.busy(key),
      lastActiveAt: slot.session.lastActiveAt,
      now: this.deps.clock.now(),
    });
    if (decision.kind === "wait") {
      slot.timer = this.deps.clock.setTimeout(() => this.onIdle(key, slot), decision.ms);
    } else if (decision.kind === "passivate") {
      const saving = this.passivate(key, slot);
      this.saving.add(saving);
      void saving.finally(() => this.saving.delete(saving));
    } else if (decision.kind === "busy" && this.idleMs !== undefined) {
      // The end of the work touches again; this is only a backstop for work that ends without a touch.
      slot.timer = this.deps.clock.setTimeout(() => this.onIdle(key, slot), this.idleMs);
    }
  }

  private onIdle(key: string, slot: Slot): void {
    slot.timer = undefined;
    if (this.slots.get(key) !== slot || slot.phase !== "warm") return;
    this.schedule(key, slot);
  }

  private async passivate(key: string, slot: Slot): Promise<void> {
    slot.phase = "saving";
    slot.activityAtStart = slot.session.activity;
    try {
      await this.deps.save(slot.session);
    } catch (error) {
      // Everything is on disk already but for the flush; the session is released anyway (nothing is lost
      // that a read from disk does not bring back), and the failure is said.
      this.deps.logger.warn("the final save of an idle session failed", {
        sessionKey: key,
        error: describeError(error),
      });
    }
    // A touch during the save made it warm again (and re-armed its timer).
    if (this.slots.get(key) !== slot || slot.phase !== "saving" || this.stopped) return;
    slot.phase = "grace";
    slot.timer = this.deps.clock.setTimeout(() => this.endGrace(key, slot), this.graceMs);
  }

  private endGrace(key: string, slot: Slot): void {
    slot.timer = undefined;
    if (this.slots.get(key) !== slot || slot.phase !== "grace") return;
    const decision = decideRelease({
      busy: this.deps.busy(key),
      activity: slot.session.activity,
      activityAtStart: slot.activityAtStart,
    });
    if (decision === "stay") {
      slot.phase = "warm";
      this.schedule(key, slot);
      return;
    }
    this.slots.delete(key);
    this.deps.logger.info("idle session unloaded from memory", {
      sessionKey: key,
      idleMinutes: this.deps.passivateAfterMinutes,
    });
  }
}
