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
 * Why a text that `JSON.parse` refused is not a store, for people: "the file is empty", else the line and column
 * where it stops being JSON and what was expected there (never `JSON.parse`'s "position 61"); its own message only
 * when the locator finds nothing wrong (it and `JSON.parse` disagree).
 */
function syntaxReason(text: string, parseMessage: string): string {
  const body = text.charCodeAt(0) === 0xfeff ? text.slice(1) : text;
  if (body.trim().length === 0) return "the file is empty";
  return storeParseReason(text, `not valid JSON (${parseMessage})`);
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
    return { ok: false, reason: syntaxReason(text, message) };
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
  // The object JSON.parse just made, no one else's: given a null prototype in place, not copied (a 10,000-key
  // store's copy was ~10 ms of `clawdis sessions`). Its own `__proto__` key stays a key, as with the copy.
  const raw = Object.setPrototypeOf(value, null) as Record<string, Record<string, unknown>>;
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
export function usableAsIs(entry: Record<string, unknown>): boolean {
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

/** Where a JSON text first goes wrong, 1-based, and what was expected there. */
export interface JsonErrorLocation {
  /** UTF-16 offset into the text (after a leading byte order mark, which is not counted). */
  offset: number;
  line: number;
  column: number;
  /** E.g. `expected ',' or '}', found '"'` or `the text ends inside a string`. */
  problem: string;
}

/** Line and column (1-based, columns in UTF-16 units) of `offset` in `text`; `\n`, `\r\n` and `\r` end a line. */
export function lineColumnAt(text: string, offset: number): { line: number; column: number } {
  let line = 1;
  let start = 0;
  const end = Math.min(offset, text.length);
  for (let i = 0; i < end; i++) {
    const c = text.charCodeAt(i);
    if (c === 10 || (c === 13 && text.charCodeAt(i + 1) !== 10)) {
      line += 1;
      start = i + 1;
    }
  }
  return { line, column: end - start + 1 };
}

type Expect = "value" | "value-or-]" | "key-or-}" | "key" | "colon" | "comma-or-close" | "end";

const EXPECTED: Record<Expect, string> = {
  value: "a value",
  "value-or-]": "a value or ']'",
  "key-or-}": "a double-quoted key or '}'",
  key: "a double-quoted key",
  colon: "':'",
  "comma-or-close": "',' or the closing bracket",
  end: "the end of the file",
};

/**
 * The first place where `text` is not strict JSON (RFC 8259), or undefined when it is: the offset, line and
 * column, and what was expected. Pure and iterative (any nesting depth). `JSON.parse` says "position 32" or,
 * in many cases, no position at all; this is what a person needs to find the spot in an editor.
 */
export function locateJsonError(source: string): JsonErrorLocation | undefined {
  const text = source.charCodeAt(0) === 0xfeff ? source.slice(1) : source;
  const at = (offset: number, problem: string): JsonErrorLocation => ({
    offset,
    ...lineColumnAt(text, offset),
    problem,
  });
  const stack: string[] = [];
  const found = (i: number, expect: string): JsonErrorLocation => {
    if (i < text.length) return at(i, `expected ${expect}, found ${quoteChar(text[i]!)}`);
    const open = stack[stack.length - 1];
    if (open === undefined) return at(i, `expected ${expect}, the file ends`);
    return at(
      i,
      `the file ends before the closing '${open === "{" ? "}" : "]"}' (cut short, or a bracket missing?)`,
    );
  };
  let state: Expect = "value";
  let i = 0;
  const afterValue = (): Expect => (stack.length === 0 ? "end" : "comma-or-close");
  while (true) {
    while (i < text.length && " \t\n\r".includes(text[i]!)) i++;
    if (i >= text.length) return state === "end" ? undefined : found(i, EXPECTED[state]);
    const c = text[i]!;
    if (state === "end") return found(i, EXPECTED.end);
    if (state === "colon") {
      if (c !== ":") return found(i, EXPECTED.colon);
      i++;
      state = "value";
      continue;
    }
    if (state === "comma-or-close") {
      const open = stack[stack.length - 1];
      if (c === ",") {
        i++;
        state = open === "{" ? "key" : "value";
      } else if ((c === "}" && open === "{") || (c === "]" && open === "[")) {
        i++;
        stack.pop();
        state = afterValue();
      } else return found(i, `',' or '${open === "{" ? "}" : "]"}'`);
      continue;
    }
    if (state === "key" || state === "key-or-}") {
      if (c === "}" && state === "key-or-}") {
        i++;
        stack.pop();
        state = afterValue();
        continue;
      }
      if (c !== '"') return found(i, EXPECTED[state]);
      const end = scanString(text, i);
      if (typeof end !== "number") return at(end.offset, end.problem);
      i = end;
      state = "colon";
      continue;
    }
    // A value (or, right after '[', the closing bracket).
    if (c === "]" && state === "value-or-]") {
      i++;
      stack.pop();
      state = afterValue();
      continue;
    }
    if (c === "{" || c === "[") {
      stack.push(c);
      i++;
      state = c === "{" ? "key-or-}" : "value-or-]";
      continue;
    }
    const end =
      c === '"'
        ? scanString(text, i)
        : c === "-" || (c >= "0" && c <= "9")
          ? scanNumber(text, i)
          : scanWord(text, i);
    if (end === undefined) return found(i, EXPECTED[state]);
    if (typeof end !== "number") return at(end.offset, end.problem);
    i = end;
    state = afterValue();
  }
}

/** Where a scanned token ends, or where it goes wrong. */
type Scan = number | { offset: number; problem: string };

function quoteChar(c: string): string {
  const code = c.charCodeAt(0);
  return code < 0x20 || code === 0x7f ? `U+${code.toString(16).toUpperCase().padStart(4, "0")}` : `'${c}'`;
}

/** A string starting at the quote at `start`: the offset after its closing quote, or where it goes wrong. */
function scanString(text: string, start: number): Scan {
  let i = start + 1;
  while (i < text.length) {
    const c = text.charCodeAt(i);
    if (c === 0x22) return i + 1;
    if (c < 0x20)
      return { offset: i, problem: `a control character (${quoteChar(text[i]!)}) inside a string` };
    if (c === 0x5c) {
      const e = text[i + 1];
      if (e === undefined) break;
      if (e === "u") {
        for (let k = 2; k < 6; k++) {
          if (!/[0-9a-fA-F]/.test(text[i + k] ?? ""))
            return { offset: i, problem: "a bad \\u escape in a string" };
        }
        i += 6;
        continue;
      }
      if (!'"\\/bfnrt'.includes(e)) return { offset: i, problem: `a bad escape \\${e} in a string` };
      i += 2;
      continue;
    }
    i++;
  }
  return { offset: text.length, problem: "the file ends inside a string (a missing closing quote?)" };
}

/** A number starting at `start`: the offset after it, or where it goes wrong. */
function scanNumber(text: string, start: number): Scan {
  const pattern = /-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?/y;
  pattern.lastIndex = start;
  const match = pattern.exec(text);
  if (!match) return { offset: start, problem: "a number that is not valid JSON" };
  const end = start + match[0].length;
  const next = text[end];
  if (next !== undefined && /[0-9.eE+-]/.test(next)) {
    return { offset: end, problem: `a number that is not valid JSON (at ${quoteChar(next)})` };
  }
  return end;
}

/** `true`, `false` or `null` at `start`: the offset after it; undefined when no literal starts there. */
function scanWord(text: string, start: number): Scan | undefined {
  for (const word of ["true", "false", "null"]) {
    if (text[start] !== word[0]) continue;
    for (let k = 1; k < word.length; k++) {
      if (text[start + k] !== word[k]) return { offset: start + k, problem: `expected ${word}` };
    }
    return start + word.length;
  }
  return undefined;
}

/**
 * Why a store text does not parse, for people: `not valid JSON at line 3, column 5: expected ',' or '}', found
 * '"'` instead of `JSON.parse`'s "position 32"; a blank file is "the file is empty". `reason` (from
 * parseStoreText, which already gives the location) is returned as it is when the text is valid JSON (the
 * problem is its shape, not its syntax). Idempotent: a reason it produced comes back unchanged.
 */
export function storeParseReason(text: string, reason: string): string {
  if (text.trim().length === 0 || (text.charCodeAt(0) === 0xfeff && text.slice(1).trim().length === 0))
    return reason;
  const where = locateJsonError(text);
  if (!where) return reason;
  return `not valid JSON at line ${where.line}, column ${where.column}: ${where.problem}`;
}
