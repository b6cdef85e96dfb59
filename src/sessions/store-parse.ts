import { quoteId, SESSION_ID_PATTERN, whyInvalid } from "./session-id.js";
import type { SessionEntry, SessionMap } from "./types.js";

/** An entry of the file that is not used (kept in the file as it is, never deleted by a read). */
export interface EntryProblem {
  key: string;
  reason: string;
}

export type ParsedStore =
  | {
      ok: true;
      /** The file's object exactly as parsed (with a null prototype): every key, usable or not, in file order. */
      raw: Record<string, unknown>;
      /** The usable entries, in file order. Shares entry objects with `raw` (except repaired ones). */
      map: SessionMap;
      problems: EntryProblem[];
    }
  | { ok: false; reason: string };

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/**
 * Parses the text of `sessions.json`. The file is bad (`ok: false`) when it is not JSON, or not a JSON object
 * whose values are all objects. Inside an entry the reader is lenient: unknown fields are kept; an entry whose
 * `sessionId` is missing or not a valid id is left out of `map` (reported in `problems`); an `updatedAt` that is
 * not a number reads as 0 (also reported).
 */
export function parseStoreText(text: string): ParsedStore {
  let value: unknown;
  try {
    // A byte order mark (some editors add one) is not part of the JSON.
    value = JSON.parse(text.charCodeAt(0) === 0xfeff ? text.slice(1) : text);
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    return {
      ok: false,
      reason: text.trim().length === 0 ? "the file is empty" : `not valid JSON (${message})`,
    };
  }
  if (!isPlainObject(value)) {
    const kind = value === null ? "null" : Array.isArray(value) ? "an array" : typeof value;
    return { ok: false, reason: `expected a JSON object of sessionKey -> entry, found ${kind}` };
  }
  for (const key of Object.keys(value)) {
    const entry = value[key];
    if (!isPlainObject(entry)) {
      const kind = entry === null ? "null" : Array.isArray(entry) ? "an array" : typeof entry;
      return { ok: false, reason: `the value of key ${quoteId(key)} is ${kind}, not an object` };
    }
  }
  const raw = nullPrototypeCopy(value as Record<string, Record<string, unknown>>);
  const { map, problems } = usableEntries(raw);
  return { ok: true, raw, map, problems };
}

/**
 * A shallow copy with a null prototype, so that indexing it by a session key never finds an inherited member
 * (`constructor`, `toString`, `__proto__`): every map the store indexes by key is one of these.
 */
export function nullPrototypeCopy<T>(obj: Record<string, T>): Record<string, T> {
  const copy = Object.create(null) as Record<string, T>;
  // On an object without a prototype, assigning `__proto__` creates an own property like any other key.
  for (const key of Object.keys(obj)) copy[key] = obj[key] as T;
  return copy;
}

/** `obj[key] = value`, also for the key `__proto__` (which a plain assignment would turn into a prototype). */
export function setOwn<T>(obj: Record<string, T>, key: string, value: T): void {
  if (key === "__proto__") {
    Object.defineProperty(obj, key, { value, writable: true, enumerable: true, configurable: true });
  } else {
    obj[key] = value;
  }
}

/** True when `entry` can be handed out as it is: a safe `sessionId` and a finite numeric `updatedAt`. */
function usableAsIs(entry: Record<string, unknown>): boolean {
  return (
    typeof entry.sessionId === "string" &&
    SESSION_ID_PATTERN.test(entry.sessionId) &&
    typeof entry.updatedAt === "number" &&
    Number.isFinite(entry.updatedAt)
  );
}

/**
 * One entry as the gateway may use it: itself when usable as it is; a copy with `updatedAt: 0` when only its
 * `updatedAt` is not a number; undefined (with the reason) when its `sessionId` is refused. The one place that
 * decides which entries are handed out: an entry whose sessionId is not a safe file name never is.
 */
export function usableEntry(entry: Record<string, unknown>): { entry?: SessionEntry; problem?: string } {
  if (usableAsIs(entry)) return { entry: entry as SessionEntry };
  const why = whyInvalid(entry.sessionId);
  if (why !== undefined) return { problem: `sessionId ${quoteId(entry.sessionId)} is refused: ${why}` };
  return {
    entry: { ...entry, sessionId: entry.sessionId as string, updatedAt: 0 },
    problem: `updatedAt ${JSON.stringify(entry.updatedAt) ?? "undefined"} is not a number; read as 0`,
  };
}

/**
 * The entries of a parsed store that the gateway may use (see usableEntry), in a null-prototype map. When every
 * entry is usable (the usual case) and `raw` has a null prototype, `map` is `raw` itself, not a copy: 10,000
 * entries are checked, not copied.
 */
export function usableEntries(raw: Record<string, Record<string, unknown>>): {
  map: SessionMap;
  problems: EntryProblem[];
} {
  const keys = Object.keys(raw);
  if (Object.getPrototypeOf(raw) === null && keys.every((key) => usableAsIs(raw[key]!))) {
    return { map: raw as SessionMap, problems: [] };
  }
  const map = Object.create(null) as SessionMap;
  const problems: EntryProblem[] = [];
  for (const key of keys) {
    const { entry, problem } = usableEntry(raw[key]!);
    if (problem !== undefined) problems.push({ key, reason: problem });
    if (entry !== undefined) map[key] = entry;
  }
  return { map, problems };
}

/** The file text the gateway writes: pretty-printed with two spaces, and a trailing newline. */
export function serializeStore(raw: Record<string, unknown>): string {
  return `${JSON.stringify(raw, null, 2)}\n`;
}

/** Per entry object: the key it was serialized under and its encoded line `  "key": {…}`. */
export type LineCache = WeakMap<object, { key: string; line: Buffer }>;

const OPEN = Buffer.from("{\n");
const COMMA = Buffer.from(",\n");
const CLOSE = Buffer.from("\n}\n");
const EMPTY = Buffer.from("{}\n");

/**
 * `serializeStore(raw)` as bytes, built from cached lines: the line of an entry object is encoded once and
 * reused while the same object sits under the same key, so rewriting a store of 10,000 entries after changing
 * one encodes one entry and copies the rest. Only for entry objects that are never changed in place (the store
 * replaces entries, it never edits them).
 */
export function serializeStoreBytes(raw: Record<string, unknown>, cache: LineCache): Buffer {
  const parts: Buffer[] = [];
  for (const key of Object.keys(raw)) {
    const value = raw[key];
    const cacheable = typeof value === "object" && value !== null;
    const hit = cacheable ? cache.get(value) : undefined;
    let line = hit?.key === key ? hit.line : undefined;
    if (line === undefined) {
      const json = JSON.stringify(value, null, 2) as string | undefined;
      if (json === undefined) continue; // no JSON form (undefined, a function): left out, as JSON.stringify does
      // Nested lines move two spaces right, as JSON.stringify does for a value one level down.
      line = Buffer.from(`  ${JSON.stringify(key)}: ${json.replace(/\n/g, "\n  ")}`);
      if (cacheable) cache.set(value, { key, line });
    }
    parts.push(parts.length === 0 ? OPEN : COMMA, line);
  }
  if (parts.length === 0) return Buffer.from(EMPTY);
  parts.push(CLOSE);
  return Buffer.concat(parts);
}
