import { passedDailyReset } from "./daily-reset.js";
import type { SessionEntry } from "./types.js";

/**
 * When a session key keeps its sessionId and when it starts a new one (SPEC section 4). Pure: the clock is
 * passed in as `now` (epoch ms).
 *
 * Callers touch `lastInteractionAt` (via `touchInteraction`) only for a real exchange: a person's message that
 * goes to the model, and the agent's reply. `/status`, directives (`/think`, `/verbose`), `/stop` and metadata
 * updates (usage counters, origin) do not touch it, so they never keep a session alive.
 */

export type ResetMatch = { matched: false } | { matched: true; trigger: string; rest: string };

/**
 * Whether `text` is a reset trigger. Rules:
 * - the whole message is trimmed first (leading and trailing whitespace, newlines included);
 * - exact match (case-sensitive): `rest` is "";
 * - the trigger followed by ONE space (" ", not a tab or newline) and more text: `rest` is everything after that
 *   one space, verbatim (case and inner spacing kept; "/new  Hi" gives " Hi");
 * - anything else does not match: "/newx", "/NEW", "x /new", "/new\nHi";
 * - when several triggers match ("/new" and "/new chat"), the longest wins.
 */
export function matchResetTrigger(text: string, triggers: readonly string[]): ResetMatch {
  const message = text.trim();
  for (const trigger of longestFirst(triggers)) {
    if (message === trigger) return { matched: true, trigger, rest: "" };
    if (message.startsWith(`${trigger} `))
      return { matched: true, trigger, rest: message.slice(trigger.length + 1) };
  }
  return { matched: false };
}

/** Each list of triggers (the config's, the same array until a reload) trimmed and ordered once. */
const ordered = new WeakMap<readonly string[], readonly string[]>();

/** `triggers` trimmed, without empty ones, longest first (a config's lists are never changed in place: a reload makes new ones). */
function longestFirst(triggers: readonly string[]): readonly string[] {
  let list = ordered.get(triggers);
  if (!list) {
    list = triggers
      .map((t) => t.trim())
      .filter((t) => t.length > 0)
      .sort((a, b) => b.length - a.length);
    ordered.set(triggers, list);
  }
  return list;
}

/** The time of the last real exchange: `lastInteractionAt`, else `updatedAt` (hand-made or legacy entries). */
export function lastInteractionOf(entry: SessionEntry): number | undefined {
  const candidates = [entry.lastInteractionAt, entry.updatedAt];
  for (const value of candidates) if (typeof value === "number" && Number.isFinite(value)) return value;
  return undefined;
}

/**
 * True when more than `idleMinutes` (strictly) passed since the last real exchange. An entry with no usable
 * timestamp, a timestamp in the future, or `idleMinutes <= 0` never expires: when in doubt, keep the memory.
 */
export function isIdleExpired(entry: SessionEntry, now: number, idleMinutes: number): boolean {
  if (!(idleMinutes > 0)) return false;
  const last = lastInteractionOf(entry);
  if (last === undefined) return false;
  return now - last > idleMinutes * 60_000;
}

export type FreshReason = "new-key" | "idle" | "daily" | "reset" | "transcript-missing";

/** The daily reset: the wall time ("04:00") and the time zone it is read in. */
export interface DailyReset {
  at: string;
  timeZone: string;
}

/**
 * True when the daily reset hour passed since the last real exchange (docs/sessions.md). An entry with no usable
 * timestamp, or one in the future, never resets.
 */
export function isDailyExpired(entry: SessionEntry, now: number, daily: DailyReset | undefined): boolean {
  if (!daily) return false;
  const last = lastInteractionOf(entry);
  if (last === undefined) return false;
  return passedDailyReset(last, daily.at, now, daily.timeZone);
}
export type SessionDecision =
  | { action: "continue"; sessionId: string }
  | { action: "fresh"; reason: FreshReason };

export interface DecideSessionInput {
  /** The key's entry in the store, undefined when the key is not there (never used, or deleted by hand). */
  entry: SessionEntry | undefined;
  /** Whether `<store dir>/<entry.sessionId>.jsonl` exists. */
  transcriptExists: boolean;
  now: number;
  idleMinutes: number;
  /** The message matched a reset trigger. */
  reset: boolean;
  /** `dailyResetAt` and the gateway's time zone; absent: no daily reset. */
  daily?: DailyReset;
}

/**
 * Decides, for a person's message, whether the key continues its sessionId or starts a fresh one. In order:
 * 1. no entry, or an entry without a sessionId string → fresh "new-key";
 * 2. a reset trigger → fresh "reset";
 * 3. the transcript is gone although the session had an exchange → fresh "transcript-missing". Precisely:
 *    `transcriptExists` is false AND `entry.lastInteractionAt` is set. A brand-new entry (made by `freshEntry`,
 *    no `lastInteractionAt` yet) or a hand-made one whose transcript was not written yet continues instead, and
 *    its first append creates the file, so this never loops;
 * 4. idle for longer than `idleMinutes` → fresh "idle";
 * 5. the daily reset hour passed since the last real exchange → fresh "daily" (idle wins when both hold: it is
 *    checked first; either one starts a new session, whichever comes first);
 * 6. otherwise continue with the entry's sessionId.
 */
export function decideSession(input: DecideSessionInput): SessionDecision {
  const { entry } = input;
  if (entry === undefined || typeof entry.sessionId !== "string" || entry.sessionId.length === 0) {
    return { action: "fresh", reason: "new-key" };
  }
  if (input.reset) return { action: "fresh", reason: "reset" };
  if (!input.transcriptExists && typeof entry.lastInteractionAt === "number") {
    return { action: "fresh", reason: "transcript-missing" };
  }
  if (isIdleExpired(entry, input.now, input.idleMinutes)) return { action: "fresh", reason: "idle" };
  if (isDailyExpired(entry, input.now, input.daily)) return { action: "fresh", reason: "daily" };
  return { action: "continue", sessionId: entry.sessionId };
}

/** A real exchange happened at `now`: a person's message handled, or the agent's reply. */
export function touchInteraction(entry: SessionEntry, now: number): SessionEntry {
  return { ...entry, lastInteractionAt: now, updatedAt: now };
}

/** Fields that describe one sessionId's life and are cleared when a new sessionId begins. */
export const PER_SESSION_FIELDS = [
  "inputTokens",
  "outputTokens",
  "totalTokens",
  "contextTokens",
  "contextEstimated",
  "compactionCount",
  "lastInteractionAt",
  "title",
] as const;

/**
 * The entry for a new sessionId on a key. Keeps what the person chose (`thinkingLevel`, `verboseLevel`), the
 * last `origin` and `model`, and every field the gateway does not know; clears usage counters, compactions and
 * `lastInteractionAt` (set by the caller when the message is handled) and the `title`; sets `createdAt` and `updatedAt`.
 * `previous` may also be an entry the store refused (its sessionId is not a safe file name): its fields are kept
 * all the same, and its sessionId is replaced.
 */
export function freshEntry(
  previous: Readonly<Record<string, unknown>> | undefined,
  sessionId: string,
  now: number,
): SessionEntry {
  const next: SessionEntry = { ...previous, sessionId, createdAt: now, updatedAt: now };
  for (const field of PER_SESSION_FIELDS) delete next[field];
  return next;
}
