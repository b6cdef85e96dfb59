import { serializeStore } from "./store-parse.js";

/**
 * The layout the store writes (`serializeStore`): `{\n`, the entry lines joined by `,\n`, then `\n}\n`; `{}\n`
 * when there is no entry. An entry line is `  "<key>": <entry>`, the entry as `JSON.stringify(entry, null, 2)`
 * with every line after its first indented two more spaces. In this layout a line that starts with exactly two
 * spaces and a quote starts an entry (JSON strings hold no raw newline, nested lines are indented further), so
 * each entry's bytes can be found without parsing, and a file is in the layout exactly when it equals
 * `serializeStore` of its own parse.
 */
export const OPEN = Buffer.from("{\n");
export const SEP = Buffer.from(",\n");
export const CLOSE = Buffer.from("\n}\n");
export const EMPTY = Buffer.from("{}\n");

/** Where each entry's line sits in a file in the layout: `keys` in file order, `starts[i]` the byte offset. */
export interface Layout {
  keys: string[];
  starts: number[];
  /** key -> its position in `keys`. */
  index: Map<string, number>;
}

/** The line of one entry, as the layout writes it (without the separator). */
export function entryLine(key: string, entry: unknown): Buffer {
  const json = JSON.stringify(entry, null, 2);
  return Buffer.from(`  ${JSON.stringify(key)}: ${json.replace(/\n/g, "\n  ")}`);
}

/** End (exclusive) of entry `i`'s line in a file of `size` bytes in the layout. */
export function lineEnd(layout: Layout, i: number, size: number): number {
  return i + 1 < layout.starts.length ? layout.starts[i + 1]! - SEP.length : size - CLOSE.length;
}

const LINE_START = Buffer.from('\n  "');

/**
 * The offsets of the entry lines that start after a newline in `bytes[from, end)` (for a file in the layout
 * from offset 0: every entry line, since the first follows `{\n`).
 */
export function lineStarts(bytes: Buffer, from: number, end: number): number[] {
  const starts: number[] = [];
  for (let at = bytes.indexOf(LINE_START, from); at >= 0 && at + LINE_START.length <= end; ) {
    starts.push(at + 1);
    at = bytes.indexOf(LINE_START, at + 1);
  }
  return starts;
}

/**
 * The layout of `bytes` (a whole file) parsed as `raw`, or undefined when the file is not exactly what the
 * store would write for `raw` (hand-formatted, JSON5, a byte order mark, other spacing: the next write then
 * rewrites it whole, in the layout).
 */
export function layoutOf(bytes: Buffer, raw: Record<string, unknown>): Layout | undefined {
  const keys = Object.keys(raw);
  if (keys.length === 0) return bytes.equals(EMPTY) ? { keys, starts: [], index: new Map() } : undefined;
  const canonical = serializeStore(raw);
  if (Buffer.byteLength(canonical) !== bytes.length || !bytes.equals(Buffer.from(canonical)))
    return undefined;
  return layoutFromStarts(keys, lineStarts(bytes, 0, bytes.length));
}

/** A layout of `keys` whose lines start at `starts`; undefined when the counts differ. */
export function layoutFromStarts(keys: string[], starts: number[]): Layout | undefined {
  if (starts.length !== keys.length) return undefined;
  return { keys, starts, index: new Map(keys.map((key, i) => [key, i])) };
}

/**
 * True for keys that JavaScript objects order before all others (array indices: "0", "17"). The layout follows
 * the order of `Object.keys`, so a new key of this kind does not go at the end: the file is written whole.
 */
export function isArrayIndex(key: string): boolean {
  return /^(?:0|[1-9]\d{0,9})$/.test(key) && Number(key) < 4_294_967_295;
}
