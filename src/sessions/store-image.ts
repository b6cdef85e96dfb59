import type { OutsideEdit } from "./store-diff.js";
import { type Layout, layoutOf } from "./store-layout.js";
import { type EntryProblem, nullPrototypeCopy, setOwn, usableAsIs, usableEntries } from "./store-parse.js";
import type { FileVersion } from "./store-read.js";
import type { SessionMap } from "./types.js";

/** The file's object as parsed: every key, usable or not (see store-parse.ts). */
export type RawStore = Record<string, Record<string, unknown>>;

/**
 * One version of `sessions.json` as the store holds it: its bytes (the only copy of them), their parse, the
 * usable map derived from it, and where each entry's line sits. Invariants:
 * - `buffer[0, size)`, `raw`, `map` and `layout` all describe the version `version`;
 * - entry objects are never changed: a change replaces the entry (so they are shared freely);
 * - a map handed out (`handOut`) is never changed afterwards: the next change works on a copy;
 * - `map` is `raw` itself while every entry is usable as it is (usableEntries), else derived again whenever an
 *   entry that is not usable as it is comes or goes;
 * - changes happen in synchronous steps that keep all of this true.
 */
export class StoreImage {
  /** Whether an unchanged (ino, size, mtime, ctime) proves that the bytes are still these (see SessionStore). */
  trusted: boolean;
  /** Undefined: not known yet (found out on the first write); null: the file is not in the layout. */
  layout: Layout | null | undefined;
  private shared = false;

  private constructor(
    public version: FileVersion,
    public buffer: Buffer,
    public size: number,
    public raw: RawStore,
    public map: SessionMap,
    trusted: boolean,
    layout: Layout | null | undefined,
  ) {
    this.trusted = trusted;
    this.layout = layout;
  }

  /** From a full parse of `bytes` (a view of a buffer of its own, see readStoreBytes' `spare`). */
  static parsed(
    version: FileVersion,
    bytes: Buffer,
    raw: RawStore,
    map: SessionMap,
    trusted: boolean,
  ): StoreImage {
    const buffer = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.buffer.byteLength - bytes.byteOffset);
    return new StoreImage(version, buffer, bytes.length, raw, map, trusted, undefined);
  }

  /** From a file the store wrote whole (`wholeFile`); returns the problems of its entries too. */
  static written(
    whole: { buffer: Buffer; size: number; layout: Layout },
    raw: RawStore,
  ): { image: StoreImage; problems: EntryProblem[] } {
    const { map, problems } = usableEntries(raw);
    const image = new StoreImage(UNWRITTEN, whole.buffer, whole.size, raw, map, false, whole.layout);
    return { image, problems };
  }

  get bytes(): Buffer {
    return this.buffer.subarray(0, this.size);
  }

  /** The file's entry of `key` (usable or not), or undefined. */
  entry(key: string): Record<string, unknown> | undefined {
    return Object.hasOwn(this.raw, key) ? this.raw[key] : undefined;
  }

  /** The map, for a caller to keep: it is never changed after this (see the invariants). */
  handOut(): SessionMap {
    this.shared = true;
    return this.map;
  }

  /** The layout, found out from the bytes the first time (null: not in the layout). */
  knownLayout(): Layout | null {
    if (this.layout === undefined) this.layout = layoutOf(this.bytes, this.raw) ?? null;
    return this.layout;
  }

  /**
   * Sets (or, for undefined, deletes) entries of `raw` and keeps `map` in step. Returns the problems when the
   * map had to be derived again (an entry that is not usable as it is came or went).
   */
  change(changes: ReadonlyMap<string, Record<string, unknown> | undefined>): EntryProblem[] | undefined {
    this.unshare();
    let derive = false;
    for (const [key, value] of changes) {
      const before = this.entry(key);
      if (before !== undefined && !usableAsIs(before)) derive = true;
      if (value === undefined) {
        if (before === undefined) continue;
        delete this.raw[key];
        if (this.map !== this.raw) delete this.map[key];
        continue;
      }
      if (!usableAsIs(value)) derive = true;
      setOwn(this.raw, key, value);
      if (this.map !== this.raw) setOwn<Record<string, unknown>>(this.map, key, value);
    }
    return derive ? this.deriveMap() : undefined;
  }

  /**
   * The image of the file another writer left, from this one and `edit` (see diffStore): the entries the edit
   * kept are reused, only the changed ones come from the edit. `inPlace`: this image becomes it (only when no
   * write planned on this image is in flight); else a new image is built and this one is left as it is.
   */
  edited(
    edit: Extract<OutsideEdit, { kind: "entries" }>,
    next: { version: FileVersion; bytes: Buffer; trusted: boolean },
    inPlace: boolean,
  ): { image: StoreImage; problems: EntryProblem[] | undefined } {
    const layout = this.layout as Layout;
    const image = inPlace ? this : this.copy();
    const { from, to, keys, values } = edit;
    const same = keys.length === to - from && keys.every((key, t) => key === layout.keys[from + t]);
    let problems: EntryProblem[] | undefined;
    if (same) {
      problems = image.change(new Map(keys.map((key, t) => [key, values[t]])));
      const own = image.layout as Layout;
      image.layout = { keys: own.keys, starts: edit.starts, index: own.index };
    } else {
      const raw = Object.create(null) as RawStore;
      const order = [...layout.keys.slice(0, from), ...keys, ...layout.keys.slice(to)];
      for (const key of layout.keys.slice(0, from)) setOwn(raw, key, this.raw[key]!);
      for (const [t, key] of keys.entries()) setOwn(raw, key, values[t]!);
      for (const key of layout.keys.slice(to)) setOwn(raw, key, this.raw[key]!);
      image.raw = raw;
      image.shared = false;
      image.layout = { keys: order, starts: edit.starts, index: new Map(order.map((key, i) => [key, i])) };
      problems = image.deriveMap();
    }
    image.buffer = Buffer.from(
      next.bytes.buffer,
      next.bytes.byteOffset,
      next.bytes.buffer.byteLength - next.bytes.byteOffset,
    );
    image.size = next.bytes.length;
    image.version = next.version;
    image.trusted = next.trusted;
    return { image, problems };
  }

  /** An image with containers of its own (entries are shared: they are never changed). */
  private copy(): StoreImage {
    const raw = nullPrototypeCopy(this.raw);
    const map = this.map === this.raw ? (raw as SessionMap) : nullPrototypeCopy(this.map);
    const layout = this.layout && {
      keys: [...this.layout.keys],
      starts: [...this.layout.starts],
      index: new Map(this.layout.index),
    };
    return new StoreImage(this.version, this.buffer, this.size, raw, map, this.trusted, layout);
  }

  private unshare(): void {
    if (!this.shared) return;
    if (this.map === this.raw) {
      this.raw = nullPrototypeCopy(this.raw);
      this.map = this.raw as SessionMap;
    } else {
      this.map = nullPrototypeCopy(this.map);
    }
    this.shared = false;
  }

  private deriveMap(): EntryProblem[] {
    const { map, problems } = usableEntries(this.raw);
    this.map = map;
    return problems;
  }
}

/** The version of an image not on disk yet (set when its write is renamed into place). */
const UNWRITTEN: FileVersion = { ino: -1n, mtimeNs: -1n, ctimeNs: -1n, size: -1n };
