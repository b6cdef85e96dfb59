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
      /** The file's object exactly as parsed: every key, usable or not, in file order. */
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
  const { map, problems } = usableEntries(value as Record<string, Record<string, unknown>>);
  return { ok: true, raw: value, map, problems };
}

/** `obj[key] = value`, also for the key `__proto__` (which a plain assignment would turn into a prototype). */
export function setOwn<T>(obj: Record<string, T>, key: string, value: T): void {
  if (key === "__proto__") {
    Object.defineProperty(obj, key, { value, writable: true, enumerable: true, configurable: true });
  } else {
    obj[key] = value;
  }
}

/**
 * The entries of a parsed store that the gateway may use (see parseStoreText). When every entry is usable (the
 * usual case) `map` is `raw` itself, not a copy: 10,000 entries are checked, not copied.
 */
export function usableEntries(raw: Record<string, Record<string, unknown>>): {
  map: SessionMap;
  problems: EntryProblem[];
} {
  const keys = Object.keys(raw);
  const usable = (entry: Record<string, unknown>) =>
    typeof entry.sessionId === "string" &&
    SESSION_ID_PATTERN.test(entry.sessionId) &&
    typeof entry.updatedAt === "number" &&
    Number.isFinite(entry.updatedAt);
  if (keys.every((key) => usable(raw[key]!))) return { map: raw as SessionMap, problems: [] };
  const map: SessionMap = {};
  const problems: EntryProblem[] = [];
  for (const key of keys) {
    const entry = raw[key]!;
    const why = whyInvalid(entry.sessionId);
    if (why !== undefined) {
      problems.push({ key, reason: `sessionId ${quoteId(entry.sessionId)} is refused: ${why}` });
      continue;
    }
    if (typeof entry.updatedAt === "number" && Number.isFinite(entry.updatedAt)) {
      setOwn(map, key, entry as SessionEntry);
    } else {
      problems.push({
        key,
        reason: `updatedAt ${JSON.stringify(entry.updatedAt) ?? "undefined"} is not a number; read as 0`,
      });
      setOwn(map, key, { ...entry, sessionId: entry.sessionId as string, updatedAt: 0 });
    }
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
