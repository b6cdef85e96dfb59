import { type SessionKind, sessionKindOf } from "../routing/session-key.js";
import type { SessionPhase } from "../runtime/session/phase.js";
import type { SessionEntry, SessionMap } from "../sessions/types.js";

/**
 * The JSON of `clawdis sessions --json` and `GET /api/sessions` (SPEC section 5), built from a store map.
 * Pure: the caller reads the store and the clock.
 */

export type { SessionKind };

/** `group:<id>` is a group chat, `global` the single session of `scope: "global"`, anything else direct (`sessionKindOf`). */
export function sessionKind(key: string): SessionKind {
  return sessionKindOf(key);
}

export interface SessionRow {
  key: string;
  kind: SessionKind;
  sessionId: string;
  updatedAt: number;
  /** now - updatedAt, never negative. */
  ageMs: number;
  /** The session's phase while the running gateway holds it loaded (session/phase.ts); absent otherwise. */
  phase?: SessionPhase;
  /** Every other field of the entry, as stored. */
  [field: string]: unknown;
}

export interface SessionsReport {
  path: string;
  /** How many sessions are listed (after the `activeMinutes` filter). */
  count: number;
  activeMinutes: number | null;
  /** Newest first (by updatedAt; ties by key). */
  sessions: SessionRow[];
}

/** The phase of a loaded session, or undefined (not loaded, or no gateway to ask). */
export type PhaseOf = (key: string) => SessionPhase | undefined;

export function sessionRow(key: string, entry: SessionEntry, now: number, phaseOf?: PhaseOf): SessionRow {
  // The first five fields in this order, then every other field of the entry as stored; an entry's own `key`,
  // `kind` or `ageMs` field is shadowed by ours. (Object.assign is much cheaper than a rest spread on 10k rows.)
  const row = {
    key,
    kind: sessionKind(key),
    sessionId: entry.sessionId,
    updatedAt: entry.updatedAt,
    ageMs: 0,
  };
  Object.assign(row, entry);
  row.key = key;
  row.kind = sessionKind(key);
  row.ageMs = Math.max(0, now - entry.updatedAt);
  // An entry's own `phase` field is never shown as ours: only the gateway's word counts.
  const phase = phaseOf?.(key);
  if (phase !== undefined) (row as SessionRow).phase = phase;
  else if ("phase" in row) delete (row as SessionRow).phase;
  return row as SessionRow;
}

/**
 * Sessions newest first; with `activeMinutes`, only those with now - updatedAt <= activeMinutes. With `phaseOf`
 * (the running gateway's), each loaded session's row carries its `phase`.
 */
export function buildSessionsReport(
  map: SessionMap,
  path: string,
  now: number,
  activeMinutes: number | null,
  phaseOf?: PhaseOf,
): SessionsReport {
  const cutoff = activeMinutes === null ? Number.NEGATIVE_INFINITY : now - activeMinutes * 60_000;
  const keys = Object.keys(map).filter((key) => map[key]!.updatedAt >= cutoff);
  keys.sort((a, b) => map[b]!.updatedAt - map[a]!.updatedAt || (a < b ? -1 : a > b ? 1 : 0));
  const sessions = keys.map((key) => sessionRow(key, map[key]!, now, phaseOf));
  return { path, count: sessions.length, activeMinutes, sessions };
}

/**
 * `--active <minutes>`: undefined -> null (no filter); a positive finite number -> that number; anything else
 * (0, negative, `abc`, empty) -> an Error whose message says what was expected.
 */
export function parseActiveMinutes(value: string | undefined): number | null | Error {
  if (value === undefined) return null;
  const minutes = value.trim() === "" ? Number.NaN : Number(value);
  if (!Number.isFinite(minutes) || minutes <= 0) {
    return new Error(`--active expects a positive number of minutes, got ${JSON.stringify(value)}`);
  }
  return minutes;
}
