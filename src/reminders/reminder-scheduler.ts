import type { Clock } from "../core/clock.js";
import type { Logger } from "../core/logger.js";
import type { Reminder } from "./reminder.js";
import type { RemindersFile } from "./reminders-file.js";
import { type Firing, scheduleAt } from "./schedule.js";

/** The longest wait between two reads of the file: a hand edit is picked up within it. */
export const REMINDERS_LOOK_EVERY_MS = 30_000;

export interface ReminderSchedulerDeps {
  file: RemindersFile;
  clock: Clock;
  /** When the gateway started: a slot before it fires marked late. */
  startedAt: number;
  /** Read at each decision. */
  timeZone: () => string;
  logger: Logger;
  /**
   * Hands one firing to its session and resolves once it is journaled (a firing already journaled, found a
   * duplicate, resolves too). Rejects when it could not be journaled: it is tried again at the next look.
   */
  fire: (reminder: Reminder, firing: Firing) => Promise<void>;
  /** Default REMINDERS_LOOK_EVERY_MS. */
  lookEveryMs?: number;
}

/**
 * Fires reminders when they come due (docs/tools.md, Reminders). Each look re-reads `<state>/reminders.json`
 * (hand edits count), decides with `scheduleAt` (schedule.ts), and for each firing: `fire` (journaled), then
 * `markFired` in the file. A kill between the two fires nothing twice: the next look hands in the same firing
 * again, which the journal finds a duplicate of (its message id is the reminder's id, creation and slot). The next
 * look is at the next due time, at most `lookEveryMs` ahead, or at once after `poke`. Owned by the gateway:
 * `start` after the journal is open, `stop` (a stage of its shutdown) before it closes.
 */
export class ReminderScheduler {
  private timer: unknown;
  /** Nothing fires before `start` (a one-shot in-process gateway never starts it: only a gateway that serves fires). */
  private started = false;
  private stopped = false;
  private running: Promise<void> | undefined;
  private again = false;
  /** What was last reported about the file (each problem is logged once, until it changes). */
  private reported = "";

  constructor(private readonly deps: ReminderSchedulerDeps) {}

  /**
   * The first look: sets aside a file that does not parse, then fires what came due while the gateway was down;
   * resolves once that look is over.
   */
  async start(): Promise<void> {
    try {
      await this.deps.file.readSettingAside();
    } catch (error) {
      this.deps.logger.error("could not read the reminders file", { error: String(error) });
    }
    this.started = true;
    this.poke();
    await this.idle();
  }

  /** Resolves once no look is under way (one started by a timer or `poke` before this call included). */
  async idle(): Promise<void> {
    while (this.running) await this.running;
  }

  /** Looks at the file now (after a change made through the gateway). */
  poke(): void {
    if (this.stopped || !this.started) return;
    if (this.running) {
      this.again = true;
      return;
    }
    if (this.timer !== undefined) this.deps.clock.clearTimeout(this.timer);
    this.timer = undefined;
    this.running = this.look().finally(() => {
      this.running = undefined;
      if (this.again) {
        this.again = false;
        this.poke();
      }
    });
  }

  /** No more looks; resolves once the look under way (a firing being journaled) is over. */
  /** No look starts any more (at once: the gateway's stop calls it before its drain); one under way goes on. */
  halt(): void {
    this.stopped = true;
    if (this.timer !== undefined) this.deps.clock.clearTimeout(this.timer);
    this.timer = undefined;
  }

  /** `halt`, then resolves once the look under way (its firing journaled) is over. */
  async stop(): Promise<void> {
    this.halt();
    await this.running;
  }

  private async look(): Promise<void> {
    const { deps } = this;
    const every = deps.lookEveryMs ?? REMINDERS_LOOK_EVERY_MS;
    let wakeAt: number | undefined;
    try {
      const read = await deps.file.read();
      if (read.state === "unusable") {
        this.report(
          `${deps.file.path} does not parse: ${read.why}; no reminder fires until it does (the file is left as it is)`,
        );
      } else if (read.state === "ok") {
        this.report(
          read.bad
            .map((b) => `entry ${b.index + 1}${b.id !== undefined ? ` (${b.id})` : ""}: ${b.why}`)
            .join("; "),
        );
        const now = deps.clock.now();
        const plan = scheduleAt(read.reminders, now, deps.startedAt, deps.timeZone());
        wakeAt = plan.wakeAt;
        for (const firing of plan.fire) {
          if (this.stopped) break;
          const reminder = read.reminders.find((r) => r.id === firing.id);
          if (reminder) await this.fireOne(reminder, firing);
        }
      } else this.report("");
    } catch (error) {
      deps.logger.error("could not read the reminders file", { error: String(error) });
    }
    if (this.stopped) return;
    const now = deps.clock.now();
    const delay = wakeAt === undefined ? every : Math.min(Math.max(wakeAt - now, 0), every);
    this.timer = deps.clock.setTimeout(() => {
      this.timer = undefined;
      this.poke();
    }, delay);
  }

  private async fireOne(reminder: Reminder, firing: Firing): Promise<void> {
    const { deps } = this;
    try {
      await deps.fire(reminder, firing);
    } catch (error) {
      deps.logger.error(`reminder ${reminder.id} could not be handed to its session; tried again shortly`, {
        error: String(error),
      });
      return;
    }
    deps.logger.info(`reminder ${reminder.id} fired${firing.late ? " (late)" : ""}`, {
      slot: new Date(firing.slot).toISOString(),
    });
    try {
      await deps.file.markFired(reminder.id, reminder.createdAt, firing.slot);
    } catch (error) {
      // The journal holds the firing: handed in again, it is a duplicate.
      deps.logger.error(`reminder ${reminder.id} fired, but the reminders file could not record it`, {
        error: String(error),
      });
    }
  }

  /** Logs `problem` once (an empty one clears it). */
  private report(problem: string): void {
    if (problem === this.reported) return;
    this.reported = problem;
    if (problem !== "") this.deps.logger.warn(`reminders: ${problem}`);
  }
}
