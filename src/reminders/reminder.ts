import type { Authority, ChatType } from "../plugin-api/types.js";
import type { InternalRoute } from "../runtime/internal-input.js";
import { instantOf, type When, whyBadCron } from "./schedule.js";

/**
 * One reminder as `<state>/reminders.json` holds it (docs/files.md, reminders.json), and its parse. The file is
 * `{ "version": 1, "reminders": [entry, …] }`, written by the gateway and the CLI and editable by hand; an entry:
 *
 * - `id` (required, unique): 1 to 64 letters, digits, `-` or `_`;
 * - `text` (required): what the session is told when it fires;
 * - `at` (an ISO time; without an offset: wall time in the time zone) or `cron` (a cron expression): exactly one;
 * - `session`: the session key it fires in (default the primary session);
 * - `createdAt` (ISO time): when it was set; required for a repeat (its slots count from it), optional for `at`;
 * - `lastFired` (ISO time): a repeat's last slot fired;
 * - `route` `{channel, chatId, chatType}`: the chat the reply goes to (default: the chat the session was last used
 *   from);
 * - `setBy` `{authority, channel, senderId}`, and `tools` for an automated setter: whose tools the firing's turn
 *   gets (default: the owner's; only the owner can edit the state directory).
 */

export interface ReminderSetter {
  authority: Authority;
  channel: string;
  senderId: string;
}

export interface Reminder {
  id: string;
  text: string;
  /** The session key; undefined: the primary session. */
  session?: string;
  when: When;
  createdAt: number;
  lastFired?: number;
  route?: InternalRoute;
  setBy?: ReminderSetter;
  /** An automated setter's tools (the turn that set it had these); absent: none. */
  tools?: string[];
}

/** An entry of the file that cannot be used: reported, skipped, and kept in the file as it is. */
export interface BadEntry {
  /** Its position in `reminders` (from 0). */
  index: number;
  id?: string;
  why: string;
}

export const ID_PATTERN = /^[A-Za-z0-9_-]{1,64}$/;
const AUTHORITIES: readonly Authority[] = ["owner", "allowed", "untrusted", "automated"];
const CHAT_TYPES: readonly ChatType[] = ["direct", "group"];

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

function isNonEmptyString(value: unknown): value is string {
  return typeof value === "string" && value.trim().length > 0;
}

/** A reminder from a raw entry, or why it is not one. `timeZone` reads an `at` without an offset. Pure. */
export function parseEntry(raw: unknown, timeZone: string, now: number): Reminder | { why: string } {
  if (!isObject(raw)) return { why: "an entry must be an object" };
  const { id, text, at, cron, session, createdAt, lastFired, route, setBy, tools } = raw;
  if (typeof id !== "string" || !ID_PATTERN.test(id))
    return { why: "id must be 1 to 64 letters, digits, '-' or '_'" };
  if (!isNonEmptyString(text)) return { why: "text must be a non-empty string" };
  if ((at === undefined) === (cron === undefined)) return { why: "give exactly one of at or cron" };
  let when: When;
  if (at !== undefined) {
    const instant = typeof at === "string" ? instantOf(at, timeZone) : undefined;
    if (instant === undefined) return { why: `at must be an ISO time, like "2026-12-24T09:00"` };
    when = { at: instant };
  } else {
    if (typeof cron !== "string") return { why: "cron must be a string" };
    const bad = whyBadCron(cron, timeZone, now);
    if (bad) return { why: bad };
    when = { cron };
  }
  if (session !== undefined && !isNonEmptyString(session)) return { why: "session must be a session key" };
  if (createdAt === undefined && cron !== undefined)
    return { why: "a repeat needs createdAt (an ISO time): its slots count from it" };
  const created =
    createdAt === undefined ? 0 : typeof createdAt === "string" ? Date.parse(createdAt) : Number.NaN;
  if (Number.isNaN(created)) return { why: "createdAt must be an ISO time" };
  const fired = typeof lastFired === "string" ? Date.parse(lastFired) : Number.NaN;
  if (lastFired !== undefined && Number.isNaN(fired)) return { why: "lastFired must be an ISO time" };
  const reminder: Reminder = { id, text, when, createdAt: created };
  if (session !== undefined) reminder.session = session;
  if (lastFired !== undefined) reminder.lastFired = fired;
  if (route !== undefined) {
    if (
      !isObject(route) ||
      !isNonEmptyString(route.channel) ||
      !isNonEmptyString(route.chatId) ||
      !CHAT_TYPES.includes(route.chatType as ChatType)
    )
      return { why: `route must be {"channel", "chatId", "chatType": "direct" | "group"}` };
    reminder.route = { channel: route.channel, chatId: route.chatId, chatType: route.chatType as ChatType };
  }
  if (setBy !== undefined) {
    if (
      !isObject(setBy) ||
      !AUTHORITIES.includes(setBy.authority as Authority) ||
      typeof setBy.channel !== "string" ||
      typeof setBy.senderId !== "string"
    )
      return { why: `setBy must be {"authority", "channel", "senderId"}` };
    reminder.setBy = {
      authority: setBy.authority as Authority,
      channel: setBy.channel,
      senderId: setBy.senderId,
    };
  }
  if (tools !== undefined) {
    if (!Array.isArray(tools) || !tools.every((t) => typeof t === "string"))
      return { why: "tools must be a list of tool names" };
    reminder.tools = tools as string[];
  }
  return reminder;
}

/** The raw entry the file holds for `reminder` (times as ISO strings). Pure. */
export function entryOf(reminder: Reminder): Record<string, unknown> {
  const entry: Record<string, unknown> = { id: reminder.id, text: reminder.text };
  if (reminder.session !== undefined) entry.session = reminder.session;
  if ("at" in reminder.when) entry.at = new Date(reminder.when.at).toISOString();
  else entry.cron = reminder.when.cron;
  entry.createdAt = new Date(reminder.createdAt).toISOString();
  if (reminder.lastFired !== undefined) entry.lastFired = new Date(reminder.lastFired).toISOString();
  if (reminder.route) entry.route = reminder.route;
  if (reminder.setBy) entry.setBy = reminder.setBy;
  if (reminder.tools) entry.tools = reminder.tools;
  return entry;
}

/** What a reminders file holds: its usable reminders, its bad entries, and the raw entries (kept as they are). */
export interface RemindersContent {
  reminders: Reminder[];
  bad: BadEntry[];
  raw: unknown[];
}

/**
 * The content of a reminders file's text, or why the file as a whole is unusable (not JSON, not the expected
 * shape). An entry that is unusable, or whose id an earlier entry has, is a `bad` entry. Pure.
 */
export function parseRemindersText(
  text: string,
  timeZone: string,
  now: number,
): RemindersContent | { unusable: string } {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (error) {
    return { unusable: `it is not JSON (${error instanceof Error ? error.message : String(error)})` };
  }
  if (!isObject(parsed) || !Array.isArray(parsed.reminders))
    return { unusable: `it is not {"version": 1, "reminders": [...]}` };
  if (parsed.version !== undefined && parsed.version !== 1)
    return { unusable: `its version ${JSON.stringify(parsed.version)} is not one this clawdis reads (1)` };
  const content: RemindersContent = { reminders: [], bad: [], raw: parsed.reminders };
  const seen = new Set<string>();
  parsed.reminders.forEach((raw, index) => {
    const id = isObject(raw) && typeof raw.id === "string" ? raw.id : undefined;
    const result = parseEntry(raw, timeZone, now);
    if ("why" in result) content.bad.push({ index, ...(id !== undefined ? { id } : {}), why: result.why });
    else if (seen.has(result.id))
      content.bad.push({ index, id: result.id, why: "an earlier entry has the same id" });
    else {
      seen.add(result.id);
      content.reminders.push(result);
    }
  });
  return content;
}

/** The file's text for these raw entries. */
export function remindersText(raw: readonly unknown[]): string {
  return `${JSON.stringify({ version: 1, reminders: raw }, null, 2)}\n`;
}

/** A new id: `r<n>`, one more than the largest `r<n>` among `taken`. Pure. */
export function nextReminderId(taken: readonly unknown[]): string {
  let max = 0;
  for (const raw of taken) {
    const id = isObject(raw) ? raw.id : undefined;
    const match = typeof id === "string" ? /^r(\d{1,9})$/.exec(id) : null;
    if (match) max = Math.max(max, Number(match[1]));
  }
  return `r${max + 1}`;
}
