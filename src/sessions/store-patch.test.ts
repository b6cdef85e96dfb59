import { describe, expect, it } from "vitest";
import { SeededRandom } from "../../test/fault/seeded-random.js";
import { commonPrefix, commonSuffix, diffStore } from "./store-diff.js";
import { type RawStore, StoreImage } from "./store-image.js";
import { entryLine, isArrayIndex, type Layout, layoutOf } from "./store-layout.js";
import { nullPrototypeCopy, parseStoreText, serializeStore, setOwn } from "./store-parse.js";
import { applySegments, piecesOf, planPatch, spareFor, wholeFile } from "./store-patch.js";
import type { FileVersion } from "./store-read.js";

/** Seeded (the fault suite's generator), so that a failing case can be replayed: `int(n)` is in [0, n). */
function random(seed: number) {
  const r = new SeededRandom(seed);
  return {
    next: () => r.next(),
    int: (n: number) => r.int(0, n - 1),
    pick: <T>(list: readonly T[]): T => r.pick(list),
  };
}
type Random = ReturnType<typeof random>;

const KEY_POOL = [
  "main",
  "group:-1001",
  "group:-1002",
  "hooks:ci",
  "__proto__",
  "constructor",
  'we"ird',
  "new\nline",
  "é😀",
  "",
  "toString",
];

function someKey(r: Random): string {
  if (r.next() < 0.08) return String(r.int(20)); // an array index: objects order these first
  return r.next() < 0.5 ? r.pick(KEY_POOL) : `group:${r.int(1_000_000)}`;
}

function someValue(r: Random, depth = 0): unknown {
  const kind = r.int(depth > 2 ? 4 : 6);
  if (kind === 0) return r.int(100_000) * (r.next() < 0.1 ? -1.5 : 1);
  if (kind === 1) return r.pick(["low", 'say "hi"', "line\nbreak", "é😀", "", "\u0001"]);
  if (kind === 2) return r.pick([true, false, null]);
  if (kind === 3) return {};
  if (kind === 4) return Array.from({ length: r.int(3) }, () => someValue(r, depth + 1));
  const obj: Record<string, unknown> = {};
  for (let i = r.int(3); i > 0; i--) obj[r.pick(["a", "b", "chatId", "x y"])] = someValue(r, depth + 1);
  return obj;
}

function someEntry(r: Random): Record<string, unknown> {
  const entry: Record<string, unknown> = {
    sessionId: r.next() < 0.08 ? r.pick(["../x", "", 7]) : `s-${r.int(1e9)}`,
    updatedAt: r.next() < 0.05 ? "yesterday" : r.int(2e12),
  };
  for (let i = r.int(4); i > 0; i--) entry[r.pick(["model", "origin", "inputTokens", "note"])] = someValue(r);
  return entry;
}

function someStore(r: Random, size = r.int(12)): RawStore {
  const raw = Object.create(null) as RawStore;
  for (let i = 0; i < size; i++) setOwn(raw, someKey(r), someEntry(r));
  return raw;
}

/** What another writer might save: whole-entry edits in the layout, or edits of the text itself. */
function outsideEdit(r: Random, raw: RawStore, text: string): string | Buffer {
  const keys = Object.keys(raw);
  const copy = nullPrototypeCopy(raw);
  const key = keys.length > 0 ? r.pick(keys) : "main";
  switch (r.int(17)) {
    case 0: // one field of one entry
    case 1:
      setOwn(copy, key, { ...copy[key], note: r.pick(["x", "longer text", 42]) });
      return serializeStore(copy);
    case 2: // a key added at the end
      setOwn(copy, someKey(r), someEntry(r));
      return serializeStore(copy);
    case 3: // a key deleted
      delete copy[key];
      return serializeStore(copy);
    case 4: {
      // keys reordered (a rotation)
      const rotated = Object.create(null) as RawStore;
      const at = r.int(keys.length + 1);
      for (const k of [...keys.slice(at), ...keys.slice(0, at)]) setOwn(rotated, k, copy[k]!);
      return serializeStore(rotated);
    }
    case 5: // several entries changed
      for (const k of keys) if (r.next() < 0.3) setOwn(copy, k, someEntry(r));
      return serializeStore(copy);
    case 6: // the whole store replaced
      return serializeStore(someStore(r));
    case 7: {
      // one entry written compact (valid JSON, not the layout)
      const at = text.indexOf("\n  ", r.int(text.length));
      return at < 0 ? text.replace("{\n", "{ \n") : `${text.slice(0, at)}\n ${text.slice(at + 3)}`;
    }
    case 8: {
      // a duplicate of an existing line appended (a parse keeps the last value at the first place)
      if (keys.length === 0) return text;
      const line = entryLine(key, someEntry(r)).toString();
      return `${text.slice(0, text.length - 3)},\n${line}\n}\n`;
    }
    case 9: {
      // a byte changed, inserted or removed anywhere (mostly no longer JSON, or no longer UTF-8)
      const bytes = Buffer.from(text);
      const at = r.int(bytes.length);
      const c = Buffer.from(r.pick(["", "x", '"', ",", "\n", "}", "1", "\u00ff"])).subarray(0, r.int(3));
      return Buffer.concat([bytes.subarray(0, at), c, bytes.subarray(at + (r.next() < 0.5 ? 1 : 0))]);
    }
    case 10: // a value that is not an object
      return serializeStore(Object.assign(copy, { [key]: r.pick([1, null, [], "s"]) }));
    case 11: {
      // a line added at the end of the text, whatever its key (an array index belongs first)
      const line = entryLine(r.next() < 0.5 ? String(r.int(20)) : someKey(r), someEntry(r)).toString();
      return keys.length === 0 ? `{\n${line}\n}\n` : `${text.slice(0, text.length - 3)},\n${line}\n}\n`;
    }
    case 12: {
      // the lines of the text rotated (the layout's order only if no array index moved)
      const lines = keys.map((k) => entryLine(k, copy[k]).toString());
      const at = r.int(lines.length + 1);
      const moved = [...lines.slice(at), ...lines.slice(0, at)];
      return moved.length === 0 ? text : `{\n${moved.join(",\n")}\n}\n`;
    }
    case 13: {
      // a line put anywhere in the text, whatever its key
      const lines = keys.map((k) => entryLine(k, copy[k]).toString());
      const line = entryLine(r.next() < 0.3 ? String(r.int(20)) : someKey(r), someEntry(r)).toString();
      lines.splice(r.int(lines.length + 1), 0, line);
      return `{\n${lines.join(",\n")}\n}\n`;
    }
    case 14: // the start or the end of the file damaged or reformatted
      if (r.next() < 0.5) return r.pick(["", "x", "[", " ", "{"]) + text.slice(r.int(3));
      return text.slice(0, text.length - r.int(3)) + r.pick(["", "x", "\n", " ", "}"]);
    case 15: {
      // a separator between two entries damaged
      const at = text.indexOf(",\n", r.int(text.length));
      return at < 0
        ? text
        : text.slice(0, at) + r.pick(["", ",", "\n", ";\n", ", ", ",\n,\n"]) + text.slice(at + 2);
    }
    default: // a byte order mark, or the same bytes
      return r.next() < 0.5 ? `\ufeff${text}` : text;
  }
}

/** One `,\n` between two entries replaced by something else. */
function damageSeparator(r: Random, text: string): string {
  const at = text.indexOf('},\n  "', r.int(text.length));
  if (at < 0) return text;
  return text.slice(0, at + 1) + r.pick(["", ",", "\n", ";\n", ", ", ",\n,\n", ",,\n"]) + text.slice(at + 3);
}

/** An edit, sometimes followed by damage to the text (a separator, or the end of the file). */
function outsideEdits(r: Random, raw: RawStore, text: string): Buffer {
  const first = Buffer.from(outsideEdit(r, raw, text));
  if (r.next() < 0.7) return first;
  const again = first.toString("utf8");
  return Buffer.from(
    r.next() < 0.5 ? damageSeparator(r, again) : again.slice(0, again.length - 1) + r.pick([" ", "x"]),
  );
}

const VERSION: FileVersion = { ino: 1n, mtimeNs: 1n, ctimeNs: 1n, size: 1n };

/** An image of `raw` as written whole, as the store holds it after its own write. */
function imageOf(raw: RawStore): StoreImage {
  const whole = wholeFile(raw);
  const { image } = StoreImage.written(whole, raw);
  return image;
}

/** The deep form of a map or raw store, with key order: equal strings mean equal stores. */
const shape = (value: object) =>
  JSON.stringify(Object.keys(value).map((k) => [k, (value as Record<string, unknown>)[k]]));

describe("diffStore + StoreImage.edited: an outside edit patched in equals a full parse", () => {
  it("over 3,000 random stores and edits", () => {
    const paths = { same: 0, entries: 0, reparse: 0 };
    for (let seed = 1; seed <= 3000; seed++) {
      const r = random(seed);
      const raw = someStore(r);
      const image = imageOf(raw);
      const before = shape(image.raw);
      const text = image.bytes.toString();
      const next = outsideEdits(r, raw, text);
      const nextText = next.toString("utf8");
      const edit = diffStore(image.bytes, image.layout as Layout, next);
      paths[edit.kind]++;
      if (edit.kind === "same") {
        expect(nextText, `seed ${seed}`).toBe(text);
        continue;
      }
      if (edit.kind === "reparse") continue;
      const parsed = parseStoreText(nextText);
      expect(parsed.ok, `seed ${seed}: a patch of a file that does not parse`).toBe(true);
      if (!parsed.ok) continue;
      const inPlace = r.next() < 0.5;
      const { image: after } = image.edited(edit, { version: VERSION, bytes: next, trusted: true }, inPlace);
      expect(shape(after.raw), `seed ${seed}`).toBe(shape(parsed.raw));
      expect(shape(after.map), `seed ${seed}`).toBe(shape(parsed.map));
      expect(Object.getPrototypeOf(after.raw)).toBeNull();
      expect(Object.getPrototypeOf(after.map)).toBeNull();
      expect(after.layout, `seed ${seed}`).toEqual(layoutOf(next, parsed.raw as RawStore));
      expect(after.bytes.equals(next)).toBe(true);
      if (!inPlace) expect(shape(image.raw), `seed ${seed}: the old image changed`).toBe(before);
    }
    // Not vacuous: most edits of whole entries in the layout take the patch path.
    expect(paths.entries).toBeGreaterThan(700);
    expect(paths.reparse).toBeGreaterThan(300);
    expect(paths.same).toBeGreaterThan(50);
  });

  it("keeps entries found only in the common prefix and suffix, and parses only the changed one", () => {
    const raw = someStore(random(7), 0);
    for (let i = 0; i < 50; i++)
      setOwn<Record<string, unknown>>(raw, `k${i}`, { sessionId: `s${i}`, updatedAt: i });
    const image = imageOf(raw);
    const changed = nullPrototypeCopy(raw);
    setOwn<Record<string, unknown>>(changed, "k20", { sessionId: "s20", updatedAt: 20, note: "edited" });
    const edit = diffStore(image.bytes, image.layout as Layout, Buffer.from(serializeStore(changed)));
    expect(edit).toMatchObject({ kind: "entries", from: 20, to: 21, keys: ["k20"] });
  });

  it("patches a deleted key in without parsing anything", () => {
    const raw = Object.create(null) as RawStore;
    for (let i = 0; i < 5; i++)
      setOwn<Record<string, unknown>>(raw, `k${i}`, { sessionId: `s${i}`, updatedAt: i });
    const image = imageOf(raw);
    for (const gone of ["k0", "k2", "k4"]) {
      const less = nullPrototypeCopy(raw);
      delete less[gone];
      const at = Number(gone.slice(1));
      expect(diffStore(image.bytes, image.layout as Layout, Buffer.from(serializeStore(less)))).toMatchObject(
        {
          kind: "entries",
          from: at,
          to: at + 1,
          keys: [],
        },
      );
    }
  });

  it("asks for a full parse when a changed entry repeats a key kept elsewhere", () => {
    const raw = Object.create(null) as RawStore;
    for (let i = 0; i < 5; i++)
      setOwn<Record<string, unknown>>(raw, `k${i}`, { sessionId: `s${i}`, updatedAt: i });
    const image = imageOf(raw);
    const text = image.bytes.toString();
    const twice = text.replace('"k3"', '"k0"');
    expect(diffStore(image.bytes, image.layout as Layout, Buffer.from(twice))).toMatchObject({
      kind: "reparse",
    });
  });
});

describe("planPatch + applySegments: the file written as pieces equals serializeStore", () => {
  it("over 3,000 random stores and batches of changes, in place and in a new buffer", () => {
    let patched = 0;
    for (let seed = 1; seed <= 3000; seed++) {
      const r = random(seed * 7919);
      const raw = someStore(r, 1 + r.int(15));
      const whole = wholeFile(raw);
      const old = whole.buffer.subarray(0, whole.size);
      const changes = new Map<string, Record<string, unknown> | undefined>();
      const keys = Object.keys(raw);
      for (let i = 1 + r.int(4); i > 0; i--) {
        const key = r.next() < 0.6 && keys.length > 0 ? r.pick(keys) : someKey(r);
        changes.set(key, r.next() < 0.25 ? undefined : someEntry(r));
      }
      const expected = nullPrototypeCopy(raw);
      for (const [key, value] of changes) {
        if (value === undefined) delete expected[key];
        else setOwn(expected, key, value);
      }
      const expectedText = serializeStore(expected);
      const patch = planPatch(old, whole.layout, changes);
      if (patch === undefined) {
        // Only for a new array-index key, which objects order first.
        expect([...changes.keys()].some((k) => isArrayIndex(k) && !keys.includes(k))).toBe(true);
        continue;
      }
      patched++;
      // The pieces are views of the old bytes: what the write sends, before the buffer is changed.
      const written = Buffer.concat(piecesOf(whole.buffer, patch.segments));
      expect(written.toString(), `seed ${seed}`).toBe(expectedText);
      expect(patch.size).toBe(written.length);
      const room = r.pick([0, 3, 100, 100_000, 1_000_000]);
      const buffer = Buffer.alloc(whole.size + room);
      whole.buffer.copy(buffer, 0, 0, whole.size);
      const result = applySegments(buffer, patch.segments, patch.size);
      expect(result.subarray(0, patch.size).toString(), `seed ${seed}`).toBe(expectedText);
      // Room to grow in place, but never a buffer far larger than the file (a store that shrank lets go).
      expect(result.length).toBeGreaterThanOrEqual(patch.size);
      expect(result.length).toBeLessThanOrEqual(2 * (patch.size + spareFor(patch.size)));
      const layout: Layout = {
        keys: [...whole.layout.keys],
        starts: [...whole.layout.starts],
        index: new Map(whole.layout.index),
      };
      patch.relayout(layout);
      expect(layout, `seed ${seed}`).toEqual(layoutOf(Buffer.from(expectedText), expected));
    }
    expect(patched).toBeGreaterThan(2500);
  });

  it("changes one entry of 1,000 with three pieces: the bytes before, the new line, the bytes after", () => {
    const raw = Object.create(null) as RawStore;
    for (let i = 0; i < 1000; i++)
      setOwn<Record<string, unknown>>(raw, `k${i}`, { sessionId: `s${i}`, updatedAt: i });
    const whole = wholeFile(raw);
    const patch = planPatch(
      whole.buffer.subarray(0, whole.size),
      whole.layout,
      new Map([["k500", { sessionId: "s500", updatedAt: 1 }]]),
    );
    expect(patch?.segments).toHaveLength(3);
    expect(patch?.segments[1]).toMatchObject({
      bytes: entryLine("k500", { sessionId: "s500", updatedAt: 1 }),
    });
  });
});

describe("commonPrefix / commonSuffix", () => {
  it("finds the exact lengths across the block sizes they compare with", () => {
    const r = random(99);
    for (let i = 0; i < 200; i++) {
      const length = r.pick([0, 1, 15, 16, 17, 255, 4097, 70_000, 140_000]);
      const a = Buffer.alloc(length, 0x61);
      const b = Buffer.from(a);
      const at = length === 0 ? 0 : r.int(length);
      if (length > 0) b[at] = 0x62;
      const prefix = length === 0 ? 0 : at;
      expect(commonPrefix(a, b)).toBe(prefix);
      expect(commonSuffix(a, b, length - prefix)).toBe(
        length === 0 ? 0 : Math.min(length - at - 1, length - prefix),
      );
    }
  });
});
