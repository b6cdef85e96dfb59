import type { Clock } from "../core/clock.js";
import type { Logger } from "../core/logger.js";
import type { InboundMessage, ReceiveResult, ToolDefinition } from "../plugin-api/types.js";
import type { InternalInput, InternalRoute } from "../runtime/internal-input.js";
import { remindTool } from "./remind-tool.js";
import type { Reminder, ReminderSetter } from "./reminder.js";
import { firingInput, reminderToolNames, type ToolNamesFor } from "./reminder-firing.js";
import { type ReminderRow, type RemindersReport, reminderRow, remindersReport } from "./reminder-list.js";
import { ReminderScheduler } from "./reminder-scheduler.js";
import { RemindersFile, remindersPath } from "./reminders-file.js";
import { resolveWhen } from "./schedule.js";

export interface GatewayRemindersDeps {
  stateDir: string;
  clock: Clock;
  startedAt: number;
  logger: Logger;
  /** `gateway.timeZone`, else the machine's (read at each use). */
  timeZone: () => string;
  primaryKey: () => string;
  /** The tool names `who` would get in session `sessionKey` (the tools policy). */
  toolNamesFor: (sessionKey: string) => ToolNamesFor;
  /** Whether session `sessionKey` has a chat to answer in (its entry's origin). */
  hasOrigin: (sessionKey: string) => Promise<boolean>;
  /** `Gateway.submitInternal`. */
  submit: (input: InternalInput) => Promise<ReceiveResult>;
}

/** A reminder to add, as the `remind` tool, the API and the CLI give it. */
export interface ReminderSpec {
  when: string;
  text: string;
  session?: string;
  route?: InternalRoute;
  setBy?: ReminderSetter;
  tools?: string[];
}

/**
 * The gateway's reminders (docs/tools.md, Reminders): the file, the scheduler that fires them as automated turns,
 * the `remind` tool of each turn, and what the API adds, removes and lists.
 */
export class GatewayReminders {
  readonly file: RemindersFile;
  private readonly scheduler: ReminderScheduler;

  constructor(private readonly deps: GatewayRemindersDeps) {
    this.file = new RemindersFile({
      path: remindersPath(deps.stateDir),
      timeZone: deps.timeZone,
      now: () => deps.clock.now(),
      logger: deps.logger,
    });
    this.scheduler = new ReminderScheduler({
      file: this.file,
      clock: deps.clock,
      startedAt: deps.startedAt,
      timeZone: deps.timeZone,
      logger: deps.logger,
      fire: (reminder, firing) => this.fire(reminder, firing),
    });
  }

  start(): Promise<void> {
    return this.scheduler.start();
  }

  /** No reminder fires any more (see ReminderScheduler.halt). */
  halt(): void {
    this.scheduler.halt();
  }

  stop(): Promise<void> {
    return this.scheduler.stop();
  }

  /** Resolves once no look at the schedule is under way (tests move their clock between looks). */
  idle(): Promise<void> {
    return this.scheduler.idle();
  }

  /** Adds a reminder and looks at the schedule again; a string says why `spec.when` is not a time. */
  async add(spec: ReminderSpec): Promise<ReminderRow | string> {
    const now = this.deps.clock.now();
    const timeZone = this.deps.timeZone();
    const when = resolveWhen(spec.when, now, timeZone);
    if ("error" in when) return when.error;
    const reminder = await this.file.add({
      text: spec.text,
      when,
      ...(spec.session !== undefined ? { session: spec.session } : {}),
      ...(spec.route ? { route: spec.route } : {}),
      ...(spec.setBy ? { setBy: spec.setBy } : {}),
      ...(spec.tools ? { tools: spec.tools } : {}),
    });
    this.scheduler.poke();
    return reminderRow(reminder, now, timeZone);
  }

  async remove(id: string): Promise<boolean> {
    const removed = await this.file.remove(id);
    this.scheduler.poke();
    return removed;
  }

  async report(): Promise<RemindersReport> {
    return remindersReport(
      this.file.path,
      await this.file.read(),
      this.deps.clock.now(),
      this.deps.timeZone(),
    );
  }

  /**
   * The `remind` tool of a turn on `message` in session `sessionKey`: its reminders fire in that session, answer in
   * the message's chat, with the tools of the message's sender (an automated one's: what its turn was given).
   */
  toolFor(sessionKey: string, message: InboundMessage): ToolDefinition {
    const authority = message.authority ?? (message.automated ? "automated" : "untrusted");
    return remindTool((when, text) =>
      this.add({
        when,
        text,
        session: sessionKey,
        route: { channel: message.channel, chatId: message.chatId, chatType: message.chatType },
        setBy: { authority, channel: message.channel, senderId: message.senderId },
        ...(authority === "automated" ? { tools: message.allowedTools ?? [] } : {}),
      }),
    );
  }

  private async fire(reminder: Reminder, firing: Parameters<typeof firingInput>[1]): Promise<void> {
    const primaryKey = this.deps.primaryKey();
    const sessionKey = reminder.session ?? primaryKey;
    if (!reminder.route && !(await this.deps.hasOrigin(sessionKey))) {
      this.deps.logger.warn(
        `reminder ${reminder.id} came due, but session "${sessionKey}" was never used from a chat and the reminder names none: nowhere to answer; it counts as fired`,
      );
      return;
    }
    const tools = reminderToolNames(reminder, this.deps.toolNamesFor(sessionKey));
    await this.deps.submit(
      firingInput(reminder, firing, { primaryKey, timeZone: this.deps.timeZone(), tools }),
    );
  }
}
