import { type Cron, pausedCron } from "../core/croner.js";
import { parseDuration } from "./duration.js";

/**
 * When reminders are due (docs/tools.md, Reminders). Pure: every function takes `now` (epoch ms) and the time zone
 * (an IANA name) and returns a value; the scheduler (reminder-scheduler.ts) carries it out.
 *
 * - A one-shot reminder (`at`) is due from its time on, once.
 * - A repeat (`cron`, five fields, or six with seconds first, read in the time zone) is due at each slot after the
 *   last one fired (or after its creation). When several slots passed unfired (the gateway was down), it fires
 *   ONCE, for the latest of them, and says that earlier ones were missed.
 * - A firing is `late` when its slot came before the gateway started (it came due while the gateway was down).
 * Daylight-saving changes follow croner: a wall time that does not exist that day (spring forward) fires at the
 * moment after the gap; one that happens twice (fall back) fires once, the first time.
 */

/** When a reminder fires: at one instant, or on a cron repeat. */
export type When = { at: number } | { cron: string };

/** What the scheduler reads of a reminder. */
export interface Schedulable {
  id: string;
  when: When;
  /** Epoch ms. */
  createdAt: number;
  /** Repeats: the slot (epoch ms) fired last. */
  lastFired?: number;
}

/** One firing: reminder `id` for the slot `slot` (its due time). */
export interface Firing {
  id: string;
  slot: number;
  /** The slot came before the gateway started. */
  late: boolean;
  /** Repeats: slots before `slot` passed unfired (they are not fired). */
  missedEarlier: boolean;
}

/** How many slots forward `latestSlotAtOrBefore` walks at most after croner's estimate. */
const MAX_WALK = 1000;

function cronOf(expression: string, timeZone: string): Cron {
  return pausedCron(expression, { timezone: timeZone });
}

/** Why `expression` is not a cron expression this parser takes in `timeZone`, or undefined. */
export function whyBadCron(expression: string, timeZone: string, now: number): string | undefined {
  try {
    const next = cronOf(expression, timeZone).nextRun(new Date(now));
    if (next === null) return `the cron expression "${expression}" never comes due`;
    return undefined;
  } catch (error) {
    return `"${expression}" is not a cron expression: ${error instanceof Error ? error.message : String(error)}`;
  }
}

/** The first slot of `expression` strictly after `after`, or undefined when none comes. */
export function nextSlotAfter(expression: string, timeZone: string, after: number): number | undefined {
  return cronOf(expression, timeZone).nextRun(new Date(after))?.getTime();
}

/** The latest slot of `expression` that is ≤ `now` and ≥ `first` (itself a slot ≤ now). */
function latestSlotAtOrBefore(cron: Cron, first: number, now: number): number {
  let slot = first;
  // croner's previous run excludes the second of its reference: one second ahead includes `now`'s own second.
  const estimate = cron.previousRuns(1, new Date(now + 1000))[0]?.getTime();
  if (estimate !== undefined && estimate > slot && estimate <= now) slot = estimate;
  for (let i = 0; i < MAX_WALK; i++) {
    const next = cron.nextRun(new Date(slot))?.getTime();
    if (next === undefined || next > now) break;
    slot = next;
  }
  return slot;
}

const LOCAL_ISO = /^\d{4}-\d{2}-\d{2}(?:[T ]\d{2}:\d{2}(?::\d{2}(?:\.\d{1,3})?)?)?$/;
const ZONED_ISO = /^\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}(?::\d{2}(?:\.\d{1,9})?)?(?:Z|[+-]\d{2}:?\d{2})$/i;

/**
 * The instant an ISO time names: with `Z` or an offset as written; without one (`2026-12-24T09:00`, or a date
 * alone for its midnight) as wall time in `timeZone`. Undefined for anything else.
 */
export function instantOf(text: string, timeZone: string): number | undefined {
  const trimmed = text.trim();
  if (ZONED_ISO.test(trimmed)) {
    const ms = Date.parse(trimmed.replace(" ", "T"));
    return Number.isNaN(ms) ? undefined : ms;
  }
  if (!LOCAL_ISO.test(trimmed)) return undefined;
  const [date, time = "00:00:00"] = trimmed.split(/[T ]/);
  const full = time.length === 5 ? `${time}:00` : time;
  const [hms, fraction] = full.split(".");
  const wall = Date.parse(`${date}T${hms}Z`);
  if (Number.isNaN(wall)) return undefined;
  // The offset of the zone at that wall time, found in two steps (exact but at the hour a clock change skips).
  const guess = wall - offsetAt(wall, timeZone);
  const ms = wall - offsetAt(guess, timeZone);
  return ms + (fraction ? Number(fraction.padEnd(3, "0").slice(0, 3)) : 0);
}

/** The offset (ms, east positive) of `timeZone` at instant `ms`. */
function offsetAt(ms: number, timeZone: string): number {
  const parts = new Intl.DateTimeFormat("en-US", {
    timeZone,
    hourCycle: "h23",
    year: "numeric",
    month: "numeric",
    day: "numeric",
    hour: "numeric",
    minute: "numeric",
    second: "numeric",
  }).formatToParts(new Date(ms));
  const get = (type: string) => Number(parts.find((p) => p.type === type)?.value ?? "0");
  const asUtc = Date.UTC(
    get("year"),
    get("month") - 1,
    get("day"),
    get("hour"),
    get("minute"),
    get("second"),
  );
  return asUtc - Math.floor(ms / 1000) * 1000;
}

/**
 * What a person (or the model) wrote as "when": a duration ("20m", "90s", "1h30m"), an ISO time (with an offset,
 * or wall time in `timeZone`), or a cron expression. An error message when it is none of them, or a time already
 * past.
 */
export function resolveWhen(text: string, now: number, timeZone: string): When | { error: string } {
  const trimmed = text.trim();
  const duration = parseDuration(trimmed);
  if (duration !== undefined) return { at: now + duration };
  const at = instantOf(trimmed, timeZone);
  if (at !== undefined) {
    if (at <= now) return { error: `${trimmed} has already passed` };
    return { at };
  }
  if (trimmed.split(/\s+/).length >= 5) {
    const why = whyBadCron(trimmed, timeZone, now);
    return why ? { error: why } : { cron: trimmed };
  }
  return {
    error: `"${trimmed}" is not a time: write a duration ("20m", "90s", "1h30m"), an ISO time ("2026-12-24T09:00", in ${timeZone} unless it has an offset) or a cron expression ("0 9 * * 1-5")`,
  };
}

/** The firing `reminder` is due for at `now`, if any (see the contract above). */
export function dueFiring(
  reminder: Schedulable,
  now: number,
  startedAt: number,
  timeZone: string,
): Firing | undefined {
  const { when } = reminder;
  if ("at" in when) {
    if (reminder.lastFired !== undefined || when.at > now) return undefined;
    return { id: reminder.id, slot: when.at, late: when.at < startedAt, missedEarlier: false };
  }
  const cron = cronOf(when.cron, timeZone);
  const base = Math.max(reminder.createdAt, reminder.lastFired ?? reminder.createdAt);
  const first = cron.nextRun(new Date(base))?.getTime();
  if (first === undefined || first > now) return undefined;
  const slot = latestSlotAtOrBefore(cron, first, now);
  return { id: reminder.id, slot, late: slot < startedAt, missedEarlier: slot > first };
}

/** When `reminder` next comes due after `now` (undefined: never again, or it is due now). */
export function nextDueAfter(reminder: Schedulable, now: number, timeZone: string): number | undefined {
  const { when } = reminder;
  if ("at" in when) return reminder.lastFired === undefined && when.at > now ? when.at : undefined;
  const base = Math.max(reminder.createdAt, reminder.lastFired ?? reminder.createdAt, now);
  return nextSlotAfter(when.cron, timeZone, base);
}

/** What the scheduler does at `now`: the firings due, and when to look next (undefined: nothing to wait for). */
export function scheduleAt(
  reminders: readonly Schedulable[],
  now: number,
  startedAt: number,
  timeZone: string,
): { fire: Firing[]; wakeAt: number | undefined } {
  const fire: Firing[] = [];
  let wakeAt: number | undefined;
  for (const reminder of reminders) {
    const firing = dueFiring(reminder, now, startedAt, timeZone);
    if (firing) fire.push(firing);
    const next = nextDueAfter(reminder, now, timeZone);
    if (next !== undefined && (wakeAt === undefined || next < wakeAt)) wakeAt = next;
  }
  fire.sort((a, b) => a.slot - b.slot);
  return { fire, wakeAt };
}
