import { pausedCron } from "../core/croner.js";

/**
 * The daily reset (`inbound.reply.session.dailyResetAt`, docs/sessions.md). Pure: the clock (`now`, epoch ms) and
 * the time zone (an IANA name: `gateway.timeZone`, else the machine's) are passed in.
 *
 * A session whose last real exchange came before the latest reset moment (≤ now) starts afresh on its next
 * message. The reset follows the wall clock, not a count of 24 hours. Daylight-saving changes follow croner: a reset
 * time that does not exist that day (spring forward) moves forward by the gap (02:30 → 03:30); one that happens
 * twice (fall back) counts once, the first time.
 */

/** "HH:MM", 24-hour: the form `dailyResetAt` is written in. */
export const RESET_TIME = /^([01]\d|2[0-3]):([0-5]\d)$/;

/** How far back the latest reset moment is looked for: more than a day and the longest clock change. */
const LOOK_BACK_MS = 50 * 60 * 60 * 1000;

/**
 * The latest moment ≤ `now` at which the wall clock in `timeZone` showed `at` ("04:00"). Undefined when `at` is not
 * "HH:MM" (the config schema refuses such a value, so this is only a guard).
 */
export function latestResetAt(at: string, now: number, timeZone: string): number | undefined {
  const match = RESET_TIME.exec(at);
  if (!match) return undefined;
  const cron = pausedCron(`${Number(match[2])} ${Number(match[1])} * * *`, { timezone: timeZone });
  let latest: number | undefined;
  let from = new Date(now - LOOK_BACK_MS);
  for (let i = 0; i < 4; i++) {
    const next = cron.nextRun(from);
    if (next === null || next.getTime() > now) break;
    latest = next.getTime();
    from = next;
  }
  return latest;
}

/**
 * True when the reset moment `at` came after `last` (the last real exchange) and by `now`: the session belongs to
 * an earlier "day". A `last` in the future never resets (when in doubt, keep the memory).
 */
export function passedDailyReset(last: number, at: string, now: number, timeZone: string): boolean {
  if (last > now) return false;
  const reset = latestResetAt(at, now, timeZone);
  return reset !== undefined && last < reset;
}
