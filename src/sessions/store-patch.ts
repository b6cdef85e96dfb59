import {
  CLOSE,
  EMPTY,
  entryLine,
  isArrayIndex,
  type Layout,
  layoutFromStarts,
  lineEnd,
  lineStarts,
  OPEN,
  SEP,
} from "./store-layout.js";
import { serializeStore } from "./store-parse.js";

/** A piece of the new file: bytes `[from, to)` of the old one, or new bytes. */
export type Segment = { from: number; to: number; bytes?: undefined } | { bytes: Uint8Array };

/** A write that changes some entries of a file in the layout (see planPatch). */
export interface Patch {
  segments: Segment[];
  /** Size of the new file. */
  size: number;
  /**
   * Turns the old file's layout into the new file's. Call it once, on the layout the patch was planned on,
   * after the new file is in place (in place when no key was added or deleted).
   */
  relayout(layout: Layout): void;
}

type Item = { run: [number, number] } | { line: Buffer; key: string; at?: number };

/**
 * The new file as pieces of the old one (`old`, in `layout`) and the lines of the changed entries: the file a
 * whole `serializeStore` would write, without encoding or copying the entries that did not change. `changes`
 * maps a key to its new entry, or to undefined to delete it; a new key goes at the end. Undefined when the file
 * must be written whole instead (an empty file, or a new array-index key, which objects order first).
 */
export function planPatch(
  old: Buffer,
  layout: Layout,
  changes: ReadonlyMap<string, object | undefined>,
): Patch | undefined {
  const n = layout.keys.length;
  if (n === 0) return undefined;
  const replaced: { at: number; line?: Buffer }[] = [];
  const added: { key: string; line: Buffer }[] = [];
  for (const [key, value] of changes) {
    const at = layout.index.get(key);
    if (at === undefined) {
      if (value === undefined) continue;
      if (isArrayIndex(key)) return undefined;
      added.push({ key, line: entryLine(key, value) });
    } else {
      replaced.push(value === undefined ? { at } : { at, line: entryLine(key, value) });
    }
  }
  replaced.sort((a, b) => a.at - b.at);
  const items: Item[] = [];
  let next = 0;
  for (const r of replaced) {
    if (next < r.at) items.push({ run: [next, r.at - 1] });
    if (r.line) items.push({ line: r.line, key: layout.keys[r.at]!, at: r.at });
    next = r.at + 1;
  }
  if (next < n) items.push({ run: [next, n - 1] });
  for (const a of added) items.push({ line: a.line, key: a.key });
  if (items.length === 0) {
    return { segments: [{ bytes: EMPTY }], size: EMPTY.length, relayout: (l) => setLayout(l, [], []) };
  }

  const start = (i: number) => layout.starts[i]!;
  const end = (i: number) => lineEnd(layout, i, old.length);
  const segments: Segment[] = [];
  const copy = (from: number, to: number) => {
    const last = segments[segments.length - 1];
    if (last && last.bytes === undefined && last.to === from) last.to = to;
    else if (to > from) segments.push({ from, to });
  };
  copy(0, OPEN.length);
  let size = OPEN.length;
  const placed: number[] = [];
  items.forEach((item, x) => {
    if (x > 0) {
      // The separator comes from the old file when it sits next to an unchanged run there.
      const before = items[x - 1]!;
      if ("run" in before && before.run[1] < n - 1) copy(end(before.run[1]), end(before.run[1]) + SEP.length);
      else if ("run" in item && item.run[0] > 0) copy(start(item.run[0]) - SEP.length, start(item.run[0]));
      else segments.push({ bytes: SEP });
      size += SEP.length;
    }
    placed.push(size);
    if ("run" in item) {
      copy(start(item.run[0]), end(item.run[1]));
      size += end(item.run[1]) - start(item.run[0]);
    } else {
      segments.push({ bytes: item.line });
      size += item.line.length;
    }
  });
  const last = items[items.length - 1]!;
  if ("run" in last && last.run[1] === n - 1) copy(end(n - 1), old.length);
  else segments.push({ bytes: CLOSE });
  size += CLOSE.length;

  const deleted = replaced.some((r) => r.line === undefined);
  const sameKeys = added.length === 0 && !deleted;
  const relayout = (l: Layout) => {
    if (sameKeys) {
      items.forEach((item, x) => {
        if ("line" in item) {
          l.starts[item.at!] = placed[x]!;
          return;
        }
        const shift = placed[x]! - l.starts[item.run[0]]!;
        if (shift !== 0) for (let i = item.run[0]; i <= item.run[1]; i++) l.starts[i]! += shift;
      });
      return;
    }
    const keys: string[] = [];
    const starts: number[] = [];
    items.forEach((item, x) => {
      if ("line" in item) {
        keys.push(item.key);
        starts.push(placed[x]!);
        return;
      }
      const shift = placed[x]! - l.starts[item.run[0]]!;
      for (let i = item.run[0]; i <= item.run[1]; i++) {
        keys.push(l.keys[i]!);
        starts.push(l.starts[i]! + shift);
      }
    });
    if (!deleted) {
      // Only added keys, at the end: the positions of the others stay.
      for (let i = n; i < keys.length; i++) l.index.set(keys[i]!, i);
      l.keys = keys;
      l.starts = starts;
    } else {
      setLayout(l, keys, starts);
    }
  };
  return { segments, size, relayout };
}

function setLayout(l: Layout, keys: string[], starts: number[]): void {
  l.keys = keys;
  l.starts = starts;
  l.index = new Map(keys.map((key, i) => [key, i]));
}

/** Room to grow kept after a file of `size` bytes in the store's copy of it. */
export function spareFor(size: number): number {
  return Math.max(64 * 1024, size >>> 4);
}

/**
 * Turns `buffer` (holding the old file in its first bytes) into the new file of `size` bytes described by
 * `segments`, in place when it fits (each old piece moves at most once: those moving left first, in order, then
 * those moving right, from the last; then the new bytes), else in a new buffer with room to spare. Returns the
 * buffer that holds the new file.
 */
export function applySegments(buffer: Buffer, segments: readonly Segment[], size: number): Buffer {
  const at: number[] = [];
  let pos = 0;
  for (const s of segments) {
    at.push(pos);
    pos += s.bytes === undefined ? s.to - s.from : s.bytes.length;
  }
  if (size > buffer.length || buffer.length > 2 * (size + spareFor(size))) {
    const fresh = Buffer.allocUnsafeSlow(size + spareFor(size));
    segments.forEach((s, x) => {
      if (s.bytes === undefined) buffer.copy(fresh, at[x]!, s.from, s.to);
      else fresh.set(s.bytes, at[x]);
    });
    return fresh;
  }
  for (let x = 0; x < segments.length; x++) {
    const s = segments[x]!;
    if (s.bytes === undefined && at[x]! < s.from) buffer.copyWithin(at[x]!, s.from, s.to);
  }
  for (let x = segments.length - 1; x >= 0; x--) {
    const s = segments[x]!;
    if (s.bytes === undefined && at[x]! > s.from) buffer.copyWithin(at[x]!, s.from, s.to);
  }
  segments.forEach((s, x) => {
    if (s.bytes !== undefined) buffer.set(s.bytes, at[x]);
  });
  return buffer;
}

/** The pieces to hand to the write: views of `buffer` for the old bytes. */
export function piecesOf(buffer: Buffer, segments: readonly Segment[]): Uint8Array[] {
  return segments.map((s) => (s.bytes === undefined ? buffer.subarray(s.from, s.to) : s.bytes));
}

/** `serializeStore(raw)` in a buffer with room to spare, and its layout. */
export function wholeFile(raw: Record<string, unknown>): { buffer: Buffer; size: number; layout: Layout } {
  const text = serializeStore(raw);
  const size = Buffer.byteLength(text);
  const buffer = Buffer.allocUnsafeSlow(size + spareFor(size));
  buffer.write(text, 0, "utf8");
  const layout = layoutFromStarts(Object.keys(raw), lineStarts(buffer.subarray(0, size), 0, size));
  if (layout === undefined) throw new Error("serializeStore wrote a file out of its own layout");
  return { buffer, size, layout };
}
