import { CLOSE, isArrayIndex, type Layout, lineEnd, lineStarts, OPEN, SEP } from "./store-layout.js";

/** What another writer changed, found by comparing its file with the one we hold (see diffStore). */
export type OutsideEdit =
  | { kind: "same" }
  /**
   * The old entries `[from, to)` are now `keys` with `values` (in file order; none of them is one of the entries
   * kept before or after), and the new file is still in the layout: `starts` are the line offsets of every
   * entry of the new file. A full parse of the new file gives exactly the kept entries and these.
   */
  | {
      kind: "entries";
      from: number;
      to: number;
      keys: string[];
      values: Record<string, unknown>[];
      starts: number[];
    }
  /** The change is not a change of whole entries in the layout: parse the whole file. */
  | { kind: "reparse"; why: string };

/**
 * The file now, as `diffStore` reads it against the file held (`old`): its length, the length of their common
 * prefix, their common suffix up to a limit, and its bytes in a range. `wholeNext` makes one of a buffer; a
 * read that compared the file with the held one as it went (store-splice.ts) makes one without holding it whole.
 */
export interface NextFile {
  readonly length: number;
  /** commonPrefix(old, next). */
  readonly prefix: number;
  /** commonSuffix(old, next, limit). */
  suffix(limit: number): number;
  /** The bytes `[from, to)` of the file now. */
  bytes(from: number, to: number): Buffer;
}

/** `next` (a whole file) as diffStore reads it against `old`. */
export function wholeNext(old: Buffer, next: Buffer): NextFile {
  return {
    length: next.length,
    prefix: commonPrefix(old, next),
    suffix: (limit) => commonSuffix(old, next, limit),
    bytes: (from, to) => next.subarray(from, to),
  };
}

/**
 * Compares `next` (the file now) with `old` (the file we hold, in the layout `layout`): the common prefix and
 * suffix are found with memcmp-fast compares, the entries entirely inside them are kept as they are, and only
 * the bytes between are parsed, as a run of entry lines that must be exactly in the layout (anything else, a
 * key that also appears among the kept entries included, asks for a full parse). Pure.
 */
export function diffStore(old: Buffer, layout: Layout, file: Buffer | NextFile): OutsideEdit {
  const next = Buffer.isBuffer(file) ? wholeNext(old, file) : file;
  const n = layout.keys.length;
  if (next.length === old.length && next.prefix === old.length) return { kind: "same" };
  if (n === 0) return reparse("the file held no entry");
  // Entries whose whole line is in the common prefix (front) or in the common suffix (back) are kept. The
  // suffix is sought up to the end of the front (not of the prefix), so that the bytes between are fewest.
  const prefix = next.prefix;
  const front = countWhile(n, (i) => lineEnd(layout, i, old.length) <= prefix);
  if (front === 0 && prefix < OPEN.length) return reparse("the start of the file changed");
  const start = front > 0 ? lineEnd(layout, front - 1, old.length) : OPEN.length;
  const suffix = next.suffix(Math.min(old.length, next.length) - start);
  const firstBack = Math.max(
    front,
    n - countWhile(n, (i) => layout.starts[n - 1 - i]! >= old.length - suffix),
  );
  const back = n - firstBack;
  if (back === 0 && suffix < CLOSE.length) return reparse("the end of the file changed");
  // Array-index keys come first in a parse whatever their place in the file: only a front may hold them.
  if (back > 0 && isArrayIndex(layout.keys[firstBack]!)) return reparse("array-index keys");
  const oldEnd = back > 0 ? layout.starts[firstBack]! : old.length - CLOSE.length;
  // The back lies inside the common suffix, which does not reach before `start`: start <= end.
  const end = next.length - (old.length - oldEnd);
  const shift = next.length - old.length;
  const kept = (window: number[]) => [
    ...layout.starts.slice(0, front),
    ...window,
    ...layout.starts.slice(firstBack).map((s) => s + shift),
  ];
  const edit = { kind: "entries" as const, from: front, to: firstBack };
  // The bytes between the kept entries: their separators, and entry lines in the layout.
  const between = next.bytes(start, end);
  if (front > 0 && back > 0 ? between.equals(SEP) : front + back > 0 && between.length === 0) {
    return { ...edit, keys: [], values: [], starts: kept([]) };
  }
  const from = front > 0 ? start + SEP.length : start;
  const to = back > 0 ? end - SEP.length : end;
  if (front > 0 && !between.subarray(0, from - start).equals(SEP))
    return reparse("no separator after the front");
  if (back > 0 && (to < from || !between.subarray(to - start, end - start).equals(SEP)))
    return reparse("no separator before the back");
  const lines = between.subarray(from - start, Math.max(from, to) - start);
  let parsed: unknown;
  try {
    parsed = JSON.parse(`{${lines.toString("utf8")}}`);
  } catch {
    return reparse("the changed entries do not parse on their own");
  }
  const object = parsed as Record<string, unknown>;
  const keys = Object.keys(object);
  const values: Record<string, unknown>[] = [];
  for (const key of keys) {
    const value = object[key];
    if (typeof value !== "object" || value === null || Array.isArray(value)) return reparse("not an object");
    if (isArrayIndex(key)) return reparse("array-index keys");
    const at = layout.index.get(key);
    if (at !== undefined && (at < front || at >= firstBack)) return reparse(`key ${key} appears twice`);
    values.push(value as Record<string, unknown>);
  }
  // In the layout exactly, and no key twice among the changed ones (a parse would have merged them); nothing
  // but whitespace (no entry, where one is needed) fails this too.
  const encoded = keys.length === 0 ? "" : JSON.stringify(object, null, 2);
  if (!Buffer.from(encoded.slice(OPEN.length, encoded.length - 2)).equals(lines) || keys.length === 0) {
    return reparse("the changed entries are not in the layout");
  }
  // In the layout, the lines split where a line starts with two spaces and a quote (one per key).
  const inside = lineStarts(between, from - start, to - start).map((at) => at + start);
  return { ...edit, keys, values, starts: kept([from, ...inside]) };
}

function reparse(why: string): OutsideEdit {
  return { kind: "reparse", why };
}

/** How many of 0, 1, 2, … (below `n`) satisfy `ok` before the first that does not (`ok` is monotone). */
function countWhile(n: number, ok: (i: number) => boolean): number {
  let lo = 0;
  let hi = n;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (ok(mid)) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

const STEPS = [65_536, 4_096, 256, 16];

/** Length of the longest common prefix of `a` and `b`. */
export function commonPrefix(a: Buffer, b: Buffer): number {
  const max = Math.min(a.length, b.length);
  let k = 0;
  for (const step of STEPS) {
    while (k + step <= max && a.compare(b, k, k + step, k, k + step) === 0) k += step;
  }
  while (k < max && a[k] === b[k]) k++;
  return k;
}

/** Length of the longest common suffix of `a` and `b`, at most `limit`. */
export function commonSuffix(a: Buffer, b: Buffer, limit: number): number {
  let k = 0;
  for (const step of STEPS) {
    while (
      k + step <= limit &&
      a.compare(b, b.length - k - step, b.length - k, a.length - k - step, a.length - k) === 0
    )
      k += step;
  }
  while (k < limit && a[a.length - 1 - k] === b[b.length - 1 - k]) k++;
  return k;
}
