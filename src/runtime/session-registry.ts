// Over 400 lines: the slots of all loaded sessions and the three things that move them (the idle order with its one
// timer, the passivation with its grace timers, the warm holdings within their limits) share that one map; the pure
// decisions live beside it (passivation.ts, warm-limits.ts, session/phase.ts), the burst collections in
// collection-waves.ts.
import { absolutePath } from "../core/absolute-path.js";
import type { Clock } from "../core/clock.js";
import { describeError } from "../core/errors.js";
import type { Logger } from "../core/logger.js";
import { openFileLimit } from "../core/open-file-limit.js";
import { TranscriptWriter } from "../sessions/transcript-writer.js";
import type { CollectOptions } from "./collect-garbage.js";
import { CollectionWaves } from "./collection-waves.js";
import { decideIdle, decideRelease, idleLimitMs, PASSIVATION_GRACE_MS } from "./passivation.js";
import { PendingWork } from "./pending-work.js";
import { IllegalPhaseTransition, nextPhase, type SessionPhase } from "./session/phase.js";
import { type TailCache, tailBytes } from "./tail-cache.js";
import { type Holding, pickReleases, type WarmLimits, warmLimitsFor } from "./warm-limits.js";

/**
 * What the gateway holds in memory for one session between its turns. Everything here can be rebuilt from disk
 * (the transcript, the store), so releasing it loses nothing: the next message loads the session again.
 *
 * Kept small, since one is held per session seen within the idle time (10,000 sessions: 10,000 of them): every
 * field is set when it is made and released by setting it to undefined, never deleted (a `delete` turns the
 * object into a dictionary, several times larger).
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
  /** The transcript held open to append to (`SessionRegistry.writerFor`), closed when released. */
  transcript?: TranscriptWriter;
  /** The transcript this process last appended to for the session (the final save flushes it). */
  transcriptPath?: string;
  /** Context reads while warm (tail-cache.ts: a tail is kept from the second on). */
  resumes?: number;
  /** Bookkeeping still in flight (the store update after a turn): the final save waits for it. */
  readonly pending: PendingWork;
}

export interface SessionRegistryDeps {
  clock: Clock;
  /** `inbound.reply.session.passivateAfterMinutes` (0: never); read at each use (it may change while running). */
  readonly passivateAfterMinutes: number;
  /** Whether the session has work queued or running (its queue lane): such a session is never released. */
  busy(key: string): boolean;
  /** The final save before release: flushes what the session holds (the transcript to disk, pending writes). */
  save(session: WarmSession): Promise<void>;
  logger: Pick<Logger, "info" | "warn" | "error">;
  graceMs?: number;
  /** What all sessions together may hold warm (warm-limits.ts); default from this process's open-file limit. */
  limits?: WarmLimits;
  /**
   * A full garbage collection (after a wave of work or unloads, see RELEASES_BEFORE_COLLECTION), compacting once the
   * wave is over; default collectGarbage.
   */
  collectGarbage?: (options: CollectOptions) => void;
}

export {
  COLLECT_MAX_WAIT_MS,
  COLLECT_QUIET_MS,
  COMPACT_AFTER_MS,
  RELEASES_BEFORE_COLLECTION,
} from "./collection-waves.js";

interface Slot {
  session: WarmSession;
  /** The session's phase (session/phase.ts); moved only through `enter`. */
  phase: SessionPhase;
  /** While passivating: the final save runs (`saving`), or the grace period after it (`grace`). */
  step: "saving" | "grace" | undefined;
  /** The grace period's timer (the idle time has one timer for all sessions). */
  timer: unknown;
  /** `activity` when the passivation began. */
  activityAtStart: number;
  /** When the idle timer looks at the session next (warm sessions, while passivation is on). */
  dueAt: number;
}

/**
 * The per-session registry of warm state, with passivation: `touch(key)` on each piece of work for a session
 * (it creates the entry — a load — when there is none, cancels a passivation under way, and starts the idle time
 * over); after `passivateAfterMinutes` idle, a final save, then a grace period (`PASSIVATION_GRACE_MS`) during
 * which a touch keeps the session; then the entry is dropped and its memory released (its transcript closed). A
 * busy session (a running turn, queued work) is never released. Timers run on the injected clock: one for the idle
 * time of all sessions (armed for the one due first; a touch moves a session to the back of that order), one per
 * session only during its grace period.
 *
 * Whatever the number of sessions, what they hold together stays within `limits` (warm-limits.ts): after each
 * piece of work the least recently used idle sessions give up their tails and open transcripts first.
 */
export class SessionRegistry {
  private readonly slots = new Map<string, Slot>();
  private readonly graceMs: number;
  /** What all sessions together may hold warm. */
  readonly limits: WarmLimits;
  private stopped = false;
  /** Loads and unloads counted into bursts, each burst's memory given back once it is over. */
  private readonly waves: CollectionWaves;
  /** Final saves in flight. */
  private readonly saving = new Set<Promise<void>>();
  /** Sessions that hold a tail or an open transcript, least recently used first, as last counted. */
  private readonly holdings = new Map<string, Holding>();
  private readonly totals: WarmLimits = { openTranscripts: 0, tailBytes: 0 };
  /** Writers being closed (a stop waits for them). */
  private readonly closing = new Set<Promise<void>>();
  /**
   * The warm sessions the idle timer watches, in order of `dueAt` (a touch puts a session last: its `dueAt` is
   * now + the idle limit, the latest there is). Rebuilt in order when the idle limit changes.
   */
  private readonly due = new Map<string, Slot>();
  /** The idle limit `due` was ordered with. */
  private dueIdleMs: number | undefined;
  private idleTimer: unknown;
  /** The `dueAt` the idle timer is armed for. */
  private idleTimerAt: number | undefined;

  constructor(private readonly deps: SessionRegistryDeps) {
    this.graceMs = deps.graceMs ?? PASSIVATION_GRACE_MS;
    this.limits = deps.limits ?? warmLimitsFor(openFileLimit());
    this.waves = new CollectionWaves(deps.clock, deps.logger, deps.collectGarbage);
  }

  /** What all warm sessions hold together now: open transcripts and tail bytes. */
  held(): WarmLimits {
    return { ...this.totals };
  }

  /**
   * The session's transcript writer for `path`, opened when it holds none (or one for another path, which is
   * closed); undefined once the registry is stopped (appends then go through `appendTranscript`).
   */
  writerFor(session: WarmSession, path: string): TranscriptWriter | undefined {
    if (this.stopped) return undefined;
    const absolute = absolutePath(path);
    const current = session.transcript;
    if (current && !current.isClosed && current.path === absolute) return current;
    if (current) this.closeWriter(session);
    // Opened synchronously (no threadpool trip, nothing else runs meanwhile); a refusal throws.
    const writer = TranscriptWriter.openSync(absolute);
    session.transcript = writer;
    session.transcriptPath = absolute;
    this.account(session);
    return writer;
  }

  /**
   * Counts what `session` holds now (after a turn changed its tail or writer), marks it the most recently used,
   * and releases what the least recently used idle sessions hold while the totals are over the limits.
   */
  account(session: WarmSession): void {
    const key = session.key;
    const before = this.holdings.get(key);
    if (before) {
      this.totals.openTranscripts -= before.writer ? 1 : 0;
      this.totals.tailBytes -= before.tailBytes;
      this.holdings.delete(key);
    }
    if (this.slots.get(key)?.session !== session) return;
    const now: Holding = {
      key,
      tailBytes: session.tail ? tailBytes(session.tail) : 0,
      writer: session.transcript !== undefined && !session.transcript.isClosed,
    };
    if (now.writer || now.tailBytes > 0) {
      this.holdings.set(key, now);
      this.totals.openTranscripts += now.writer ? 1 : 0;
      this.totals.tailBytes += now.tailBytes;
    }
    const over =
      this.totals.openTranscripts > this.limits.openTranscripts ||
      this.totals.tailBytes > this.limits.tailBytes;
    if (!over) return;
    const releases = pickReleases(this.holdings.values(), this.totals, this.limits, (k) => this.deps.busy(k));
    for (const release of releases) {
      const holding = this.holdings.get(release.key);
      const held = this.slots.get(release.key)?.session;
      if (!holding || !held) continue;
      if (release.tail) {
        held.tail = undefined;
        this.totals.tailBytes -= holding.tailBytes;
        holding.tailBytes = 0;
      }
      if (release.writer) {
        this.closeWriter(held);
        this.totals.openTranscripts -= 1;
        holding.writer = false;
      }
      if (!holding.writer && holding.tailBytes === 0) this.holdings.delete(release.key);
    }
  }

  /** Closes the session's writer in the background (appends queued before it still run). */
  private closeWriter(session: WarmSession): void {
    const writer = session.transcript;
    if (!writer) return;
    session.transcript = undefined;
    const closing = writer.close().catch((error: unknown) => {
      this.deps.logger.warn("could not close a transcript", {
        sessionKey: session.key,
        error: describeError(error),
      });
    });
    this.closing.add(closing);
    void closing.finally(() => this.closing.delete(closing));
  }

  /** Drops everything the session holds from the counts and closes its transcript. */
  private release(session: WarmSession): void {
    session.tail = undefined;
    this.closeWriter(session);
    const before = this.holdings.get(session.key);
    if (before) {
      this.totals.openTranscripts -= before.writer ? 1 : 0;
      this.totals.tailBytes -= before.tailBytes;
      this.holdings.delete(session.key);
    }
  }

  /** The idle limit, read at each use: `deps.passivateAfterMinutes` may change while the gateway runs. */
  private get idleMs(): number | undefined {
    return idleLimitMs(this.deps.passivateAfterMinutes);
  }

  /**
   * Work for `key`: its warm state (loaded afresh when it was released), kept warm from now on for the idle time.
   * A session loaded by this touch starts `recovering` when the work is a replay of what the journal held
   * (`recovering`), else `ready`; a passivating one goes back to `ready`.
   */
  touch(key: string, recovering = false): WarmSession {
    let slot = this.slots.get(key);
    const load = slot === undefined;
    if (!slot) {
      // Every field at once, in this order: one shape for all sessions, no property added later.
      const session: WarmSession = {
        key,
        activity: 0,
        lastActiveAt: 0,
        tail: undefined,
        transcript: undefined,
        transcriptPath: undefined,
        resumes: 0,
        pending: new PendingWork(),
      };
      slot = {
        session,
        phase: recovering ? "recovering" : "ready",
        step: undefined,
        timer: undefined,
        activityAtStart: 0,
        dueAt: 0,
      };
      this.slots.set(key, slot);
    }
    slot.session.activity++;
    slot.session.lastActiveAt = this.deps.clock.now();
    // New work aborts a passivation under way.
    if (slot.phase === "passivating") this.move(key, slot, "ready");
    this.clear(slot);
    this.watch(key, slot, slot.session.lastActiveAt);
    this.account(slot.session);
    this.waves.note(load);
    return slot.session;
  }

  /** The phase of `key` while it is loaded (session/phase.ts); undefined when it is not. */
  phaseOf(key: string): SessionPhase | undefined {
    return this.slots.get(key)?.phase;
  }

  /**
   * Moves the loaded session `key` to phase `to` (processing when its turn begins, compacting, ready when it ends).
   * An illegal transition is a bug: it is logged with the session key and thrown (IllegalPhaseTransition). A
   * session that is not loaded is a bug too (work is always touched in first).
   */
  enter(key: string, to: SessionPhase): void {
    const slot = this.slots.get(key);
    if (!slot) {
      this.deps.logger.error("a session phase change for a session that is not loaded", {
        sessionKey: key,
        to,
      });
      throw new Error(`session ${key} is not loaded (phase change to ${to})`);
    }
    this.move(key, slot, to);
  }

  private move(key: string, slot: Slot, to: SessionPhase): void {
    try {
      slot.phase = nextPhase(slot.phase, to);
    } catch (error) {
      if (error instanceof IllegalPhaseTransition) {
        this.deps.logger.error("illegal session phase transition", { sessionKey: key, from: error.from, to });
      }
      throw error;
    }
    if (to !== "passivating") slot.step = undefined;
  }

  /** The warm state of `key`, if it is held (does not count as work). */
  peek(key: string): WarmSession | undefined {
    return this.slots.get(key)?.session;
  }

  /** How many sessions are held warm. */
  get size(): number {
    return this.slots.size;
  }

  /**
   * Resolves when no final save is in flight (a stop waits for them; tests wait for the grace period to begin).
   * After `stop`, also closes every transcript still held (call it once no turn runs).
   */
  async settled(): Promise<void> {
    while (this.saving.size > 0) await Promise.allSettled([...this.saving]);
    if (this.stopped) for (const slot of this.slots.values()) this.closeWriter(slot.session);
    while (this.closing.size > 0) await Promise.allSettled([...this.closing]);
  }

  /** Clears every timer (gateway stop); what is held is left as it is (everything is on disk). */
  stop(): void {
    this.stopped = true;
    this.waves.stop();
    for (const slot of this.slots.values()) this.clear(slot);
    this.due.clear();
    this.armIdle();
  }

  private clear(slot: Slot): void {
    if (slot.timer !== undefined) this.deps.clock.clearTimeout(slot.timer);
    slot.timer = undefined;
  }

  /**
   * Puts a warm session last in the idle order, to be looked at once idle for the limit after `from` (its last
   * work; for a busy session, now: a backstop, since the end of its work touches it again). Nothing is watched
   * while passivation is off or after a stop.
   */
  private watch(key: string, slot: Slot, from: number): void {
    this.due.delete(key);
    const idleMs = this.idleMs;
    if (idleMs !== undefined && !this.stopped) {
      if (idleMs !== this.dueIdleMs) this.reorder(idleMs);
      slot.dueAt = from + idleMs;
      this.due.set(key, slot);
    }
    this.armIdle();
  }

  /** The idle limit changed: every watched session's `dueAt` again, and `due` in that order. */
  private reorder(idleMs: number): void {
    this.dueIdleMs = idleMs;
    const slots = [...this.due.values()];
    for (const slot of slots) slot.dueAt = slot.session.lastActiveAt + idleMs;
    slots.sort((a, b) => a.dueAt - b.dueAt);
    this.due.clear();
    for (const slot of slots) this.due.set(slot.session.key, slot);
  }

  /** Arms the one idle timer for the session due first (kept when it is armed for that time already). */
  private armIdle(): void {
    const first = this.due.values().next().value as Slot | undefined;
    if (first && this.idleTimer !== undefined && this.idleTimerAt === first.dueAt) return;
    if (this.idleTimer !== undefined) this.deps.clock.clearTimeout(this.idleTimer);
    this.idleTimer = undefined;
    this.idleTimerAt = undefined;
    if (!first) return;
    this.idleTimerAt = first.dueAt;
    this.idleTimer = this.deps.clock.setTimeout(
      () => this.onIdle(),
      Math.max(0, first.dueAt - this.deps.clock.now()),
    );
  }

  /** The idle timer fired: every session due by now is decided (`decideIdle`), in order; then it is armed again. */
  private onIdle(): void {
    this.idleTimer = undefined;
    this.idleTimerAt = undefined;
    const idleMs = this.idleMs;
    if (idleMs !== undefined && idleMs !== this.dueIdleMs) this.reorder(idleMs);
    const now = this.deps.clock.now();
    const ready: [string, Slot][] = [];
    for (const [key, slot] of this.due) {
      if (idleMs !== undefined && slot.dueAt > now) break;
      ready.push([key, slot]);
    }
    for (const [key, slot] of ready) {
      this.due.delete(key);
      const decision = decideIdle({
        idleMs,
        busy: this.deps.busy(key),
        lastActiveAt: slot.session.lastActiveAt,
        now,
      });
      if (decision.kind === "wait") {
        this.watch(key, slot, slot.session.lastActiveAt);
      } else if (decision.kind === "busy") {
        this.watch(key, slot, now);
      } else if (decision.kind === "passivate") {
        const saving = this.passivate(key, slot);
        this.saving.add(saving);
        void saving.finally(() => this.saving.delete(saving));
      }
      // "never": passivation was turned off; the session's next touch watches it again.
    }
    this.armIdle();
  }

  private async passivate(key: string, slot: Slot): Promise<void> {
    this.move(key, slot, "passivating");
    slot.step = "saving";
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
    if (this.slots.get(key) !== slot || slot.step !== "saving" || this.stopped) return;
    slot.step = "grace";
    slot.timer = this.deps.clock.setTimeout(() => this.endGrace(key, slot), this.graceMs);
  }

  private endGrace(key: string, slot: Slot): void {
    slot.timer = undefined;
    if (this.slots.get(key) !== slot || slot.step !== "grace") return;
    const decision = decideRelease({
      busy: this.deps.busy(key),
      activity: slot.session.activity,
      activityAtStart: slot.activityAtStart,
    });
    if (decision === "stay") {
      // Busy (a touch during the grace period made it ready already): watched again from now.
      if (slot.phase === "passivating") this.move(key, slot, "ready");
      this.watch(key, slot, this.deps.clock.now());
      return;
    }
    this.release(slot.session);
    this.slots.delete(key);
    this.deps.logger.info("idle session unloaded from memory", {
      sessionKey: key,
      idleMinutes: this.deps.passivateAfterMinutes,
    });
    this.waves.note(true);
  }
}
