import { formatInZone } from "../core/time-zone.js";
import type { BadEntry, Reminder, RemindersContent } from "./reminder.js";
import { nextDueAfter } from "./schedule.js";

/** One reminder as `clawdis reminders list` and `GET /api/reminders` show it. */
export interface ReminderRow {
  id: string;
  /** The session key; absent: the primary session. */
  session?: string;
  /** `at <ISO>` or `cron <expression>`. */
  schedule: string;
  /** The next due time (ISO), null when it is due now (or never again). */
  next: string | null;
  /** `next` as wall time in the time zone. */
  nextLocal: string | null;
  text: string;
  lastFired?: string;
  route?: Reminder["route"];
}

/** The whole list: the file, the time zone, the reminders, and the entries skipped and why. */
export interface RemindersReport {
  path: string;
  timeZone: string;
  reminders: ReminderRow[];
  bad: BadEntry[];
  /** Set when the file does not parse (nothing in it fires). */
  unusable?: string;
}

/** The row of `reminder` at `now`. Pure. */
export function reminderRow(reminder: Reminder, now: number, timeZone: string): ReminderRow {
  const { when } = reminder;
  const at = "at" in when ? when.at : undefined;
  const next = at !== undefined && at <= now ? undefined : nextDueAfter(reminder, now, timeZone);
  return {
    id: reminder.id,
    ...(reminder.session !== undefined ? { session: reminder.session } : {}),
    schedule: "at" in when ? `at ${new Date(when.at).toISOString()}` : `cron ${when.cron}`,
    next: next === undefined ? null : new Date(next).toISOString(),
    nextLocal: next === undefined ? null : formatInZone(next, timeZone),
    text: reminder.text,
    ...(reminder.lastFired !== undefined ? { lastFired: new Date(reminder.lastFired).toISOString() } : {}),
    ...(reminder.route ? { route: reminder.route } : {}),
  };
}

/** The report of a file's content (or of a file that does not parse, or none). Pure. */
export function remindersReport(
  path: string,
  read: { state: "missing" } | ({ state: "ok" } & RemindersContent) | { state: "unusable"; why: string },
  now: number,
  timeZone: string,
): RemindersReport {
  const base = { path, timeZone, reminders: [], bad: [] };
  if (read.state === "missing") return base;
  if (read.state === "unusable") return { ...base, unusable: read.why };
  return {
    path,
    timeZone,
    reminders: read.reminders.map((r) => reminderRow(r, now, timeZone)),
    bad: read.bad,
  };
}

/** A reminder in one line: `r3  next 2026-12-06 21:40:05 CET  (cron 0 9 * * *)  water the plants`. Pure. */
export function describeRow(row: ReminderRow): string {
  const next = row.nextLocal ? `next ${row.nextLocal}` : "due now";
  const session = row.session !== undefined ? `  [${row.session}]` : "";
  return `${row.id}  ${next}  (${row.schedule})${session}  ${row.text.replace(/\s+/g, " ")}`;
}
