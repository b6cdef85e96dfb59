import { ClawdisError } from "../core/errors.js";
import { quoteId, whyInvalid } from "./session-id.js";
import type { StoreImage } from "./store-image.js";
import { setOwn, usableEntry } from "./store-parse.js";
import type { SessionEntry } from "./types.js";

/**
 * The change of one key (see `SessionStore.update`). `current` is a copy of the usable entry, or undefined;
 * `unusable` is a copy of the file's entry when the key is there but its entry is not usable (its sessionId is
 * refused), so that a replacement can keep its other fields. Never an entry to use as it is.
 */
export type UpdateFn = (
  current: SessionEntry | undefined,
  unusable?: Readonly<Record<string, unknown>>,
) => SessionEntry | undefined;

/**
 * What a batch changes: key -> the entry to store, or undefined to delete it, in the order the keys were
 * first changed (a key deleted and then stored again counts from then: it goes at the end, as a new key does).
 * `moved`: keys of the file that were deleted and stored again (written whole, so that they go at the end).
 */
export interface Changes {
  entries: Map<string, SessionEntry | undefined>;
  moved: Set<string>;
}

export function noChanges(): Changes {
  return { entries: new Map(), moved: new Set() };
}

/**
 * One update (`image, changes, key, fn, now, path`, as `recordUpdate` takes them), recorded in `changes` on
 * top of `image` (undefined: no file) and the earlier updates of the batch; returns a copy of what it stores.
 * `fn` returning undefined deletes a usable entry (an absent or unusable one stays as it is). The stored entry
 * must have a valid `sessionId` (SESSION_ID_INVALID otherwise, naming `path`); `updatedAt` is `now` unless `fn`
 * set it to a new number. Throws whatever `fn` throws.
 */
export function applyUpdate(...update: Parameters<typeof recordUpdate>): SessionEntry | undefined {
  const stored = recordUpdate(...update);
  // The stored entry is JSON data (parsed from its JSON text): copied, not parsed again.
  return stored === undefined ? undefined : copyJsonData(stored);
}

/**
 * `applyUpdate` without the copy for the caller: records the update in `changes` and returns the entry as stored
 * there, which the caller must not change (undefined when it deleted the key or left it absent). Throws as
 * `applyUpdate` does.
 */
export function recordUpdate(
  image: StoreImage | undefined,
  changes: Changes,
  key: string,
  fn: UpdateFn,
  now: number,
  path: string,
): SessionEntry | undefined {
  const { entries } = changes;
  const existing = entries.has(key) ? entries.get(key) : image?.entry(key);
  const current = existing ? usableEntry(existing).entry : undefined;
  const next = current ? fn(copyJsonData(current)) : fn(undefined, existing && copyJsonData(existing));
  if (next === undefined) {
    if (current !== undefined) entries.set(key, undefined);
    return undefined;
  }
  const why = whyInvalid(next.sessionId);
  if (why !== undefined) {
    throw new ClawdisError(
      "SESSION_ID_INVALID",
      `refused to store session ${quoteId(key)}: session id ${quoteId(next.sessionId)} is invalid (${why}); nothing was written to ${path}`,
    );
  }
  const keep =
    typeof next.updatedAt === "number" &&
    Number.isFinite(next.updatedAt) &&
    next.updatedAt !== current?.updatedAt;
  // Stored as its JSON form, shared with no caller: exactly what a re-read of the file would give.
  const stored = jsonDataOf({ ...next, updatedAt: keep ? next.updatedAt : now }) as SessionEntry;
  if (entries.has(key) && entries.get(key) === undefined) {
    // Deleted earlier in this batch: stored again, it is a new key (at the end).
    entries.delete(key);
    if (image?.entry(key) !== undefined) changes.moved.add(key);
  }
  entries.set(key, stored);
  return stored;
}

/**
 * A deep copy of JSON data (what `JSON.parse` gives: plain objects, arrays, strings, finite numbers, booleans,
 * null), equal to a JSON round trip of it at a tenth of the cost. Every value copied here was parsed from JSON
 * (the file's entries, or an entry stored as its JSON form): nothing to normalise, only to unshare. An own
 * `__proto__` key stays an own key, as `JSON.parse` made it.
 */
export function copyJsonData<T>(value: T): T {
  if (Array.isArray(value)) return value.map(copyJsonData) as T;
  if (value === null || typeof value !== "object") return value;
  const copy: Record<string, unknown> = {};
  const from = value as Record<string, unknown>;
  for (const key in from) setOwn(copy, key, copyJsonData(from[key]));
  return copy as T;
}

/** How deep `jsonDataOf` copies by itself; below that, a JSON round trip (which refuses a cycle as JSON does). */
const COPY_DEPTH = 32;

/**
 * What `JSON.parse(JSON.stringify(value))` gives for an object or array, without the text in between: an own
 * enumerable key whose value is undefined, a function or a symbol is left out (null in an array), a number that is
 * not finite becomes null and -0 becomes 0, and the copy shares nothing with `value`. A value that is not plain
 * data (an object with `toJSON`, a Date, a boxed primitive, a class instance, a bigint), or one nested deeper than
 * COPY_DEPTH (a cycle, say), goes through the round trip itself, so what JSON does with it is what happens, its
 * errors included. An own `__proto__` key stays an own key, as `JSON.parse` makes it.
 */
export function jsonDataOf(value: object): unknown {
  return copyAsJson(value, 0);
}

/** What `copyAsJson` gives for a value JSON leaves out. */
const SKIP: unique symbol = Symbol("left out");

/** `value` as JSON data, or SKIP where JSON leaves it out (undefined, a function, a symbol). */
function copyAsJson(value: unknown, depth: number): unknown {
  switch (typeof value) {
    case "string":
    case "boolean":
      return value;
    case "number":
      return Number.isFinite(value) ? value + 0 : null;
    case "undefined":
    case "function":
    case "symbol":
      return SKIP;
    case "object":
      break;
    default:
      return JSON.parse(JSON.stringify(value) ?? "null");
  }
  if (value === null) return null;
  const proto = Object.getPrototypeOf(value);
  const plain =
    (Array.isArray(value) ? proto === Array.prototype : proto === Object.prototype || proto === null) &&
    typeof (value as { toJSON?: unknown }).toJSON !== "function";
  if (!plain || depth >= COPY_DEPTH) return JSON.parse(JSON.stringify(value) ?? "null");
  if (Array.isArray(value)) {
    const copy: unknown[] = new Array(value.length);
    for (let i = 0; i < value.length; i++) {
      const item = copyAsJson(value[i], depth + 1);
      copy[i] = item === SKIP ? null : item;
    }
    return copy;
  }
  const copy: Record<string, unknown> = {};
  const from = value as Record<string, unknown>;
  for (const key of Object.keys(from)) {
    const item = copyAsJson(from[key], depth + 1);
    if (item !== SKIP) setOwn(copy, key, item);
  }
  return copy;
}
