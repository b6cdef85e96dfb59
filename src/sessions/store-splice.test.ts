import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { wholeNext } from "./store-diff.js";
import { fileHolds, readStoreSpliced } from "./store-splice.js";

const dir = mkdtempSync(join(tmpdir(), "clawdis-splice-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** A deterministic run of `n` bytes (letters, so that repeats and near-repeats are easy to make). */
function text(n: number, seed = 1): Buffer {
  const out = Buffer.alloc(n);
  let x = seed;
  for (let i = 0; i < n; i++) {
    x = (x * 1103515245 + 12345) >>> 0;
    out[i] = 97 + (x % 26);
  }
  return out;
}

const K = 64 * 1024;
const base = text(3 * K + 123);
const cases: [string, Buffer, Buffer][] = [
  ["the same bytes", base, Buffer.from(base)],
  [
    "one byte changed in the middle",
    base,
    Buffer.concat([base.subarray(0, 100_000), Buffer.from("Z"), base.subarray(100_001)]),
  ],
  [
    "one byte changed at a chunk boundary",
    base,
    Buffer.concat([base.subarray(0, K), Buffer.from("Z"), base.subarray(K + 1)]),
  ],
  [
    "bytes inserted",
    base,
    Buffer.concat([base.subarray(0, 5000), Buffer.from("inserted"), base.subarray(5000)]),
  ],
  ["bytes removed", base, Buffer.concat([base.subarray(0, 5000), base.subarray(9000)])],
  ["appended", base, Buffer.concat([base, Buffer.from("more at the end")])],
  ["cut at the end", base, base.subarray(0, base.length - 777)],
  ["prepended", base, Buffer.concat([Buffer.from("before "), base])],
  ["the first byte changed", base, Buffer.concat([Buffer.from("Z"), base.subarray(1)])],
  ["the last byte changed", base, Buffer.concat([base.subarray(0, base.length - 1), Buffer.from("Z")])],
  [
    "a repeat made longer (prefix and suffix overlap)",
    Buffer.from("aaaaaaaaaa"),
    Buffer.from("aaaaaaaaaaaa"),
  ],
  ["a repeat made shorter", Buffer.from("abababababab"), Buffer.from("ababababab")],
  ["all of it different", base, text(2 * K + 5, 7)],
  ["an empty file", base, Buffer.alloc(0)],
  ["from an empty file", Buffer.alloc(0), Buffer.from("{}")],
];

describe("readStoreSpliced: the file read against the bytes held, as a NextFile", () => {
  it.each(cases)("%s: the prefix, suffixes, ranges and bytes of a whole read", (_name, old, next) => {
    const path = join(dir, "sessions.json");
    writeFileSync(path, next);
    const read = readStoreSpliced(path, old);
    if (!read?.exists || read.tooLarge) throw new Error("the file was not read");
    expect(read.version.size).toBe(BigInt(next.length));
    const whole = wholeNext(old, next);
    const file = read.file;
    expect(file.length).toBe(next.length);
    expect(file.prefix).toBe(whole.prefix);
    const most = Math.min(old.length, next.length);
    const limits = [0, 1, 7, K, most - file.prefix, most].filter((l) => l >= 0 && l <= most);
    for (const limit of limits) expect(file.suffix(limit), `suffix(${limit})`).toBe(whole.suffix(limit));
    const points = [
      0,
      1,
      file.prefix - 1,
      file.prefix,
      file.prefix + 1,
      next.length - file.tail,
      next.length - 1,
      next.length,
    ];
    const inRange = [...new Set(points.filter((p) => p >= 0 && p <= next.length))].sort((a, b) => a - b);
    for (const from of inRange) {
      for (const to of inRange.filter((t) => t >= from)) {
        expect(file.bytes(from, to).equals(next.subarray(from, to)), `bytes(${from}, ${to})`).toBe(true);
      }
    }
    expect(file.bytes(0, next.length).equals(next)).toBe(true);
    // In place, in a buffer holding the old bytes with room after them (and in one too small: a new one).
    for (const room of [0, 10, K]) {
      const buffer = Buffer.alloc(old.length + room);
      old.copy(buffer);
      const reread = readStoreSpliced(path, buffer.subarray(0, old.length));
      if (!reread?.exists || reread.tooLarge) throw new Error("the file was not read");
      expect(reread.file.patch(buffer).equals(next), `patched with ${room} bytes of room`).toBe(true);
    }
  });

  it("holds only the bytes between the common prefix and suffix", () => {
    const path = join(dir, "middle.json");
    const next = Buffer.concat([
      base.subarray(0, 100_000),
      Buffer.from("one change"),
      base.subarray(100_010),
    ]);
    writeFileSync(path, next);
    const read = readStoreSpliced(path, base);
    if (!read?.exists || read.tooLarge) throw new Error("the file was not read");
    expect(read.file.length - read.file.prefix - read.file.tail).toBeLessThanOrEqual(10);
  });

  it("a missing file, and one over the size limit (not read)", () => {
    expect(readStoreSpliced(join(dir, "none.json"), base)).toEqual({ exists: false });
    const path = join(dir, "big.json");
    writeFileSync(path, base);
    expect(readStoreSpliced(path, base, 100)).toMatchObject({ exists: true, tooLarge: true });
  });
});

describe("fileHolds: the file is exactly these bytes", () => {
  it.each(cases)("%s", (_name, old, next) => {
    const path = join(dir, "holds.json");
    writeFileSync(path, next);
    expect(fileHolds(path, old)).toBe(old.equals(next));
    expect(fileHolds(path, next)).toBe(true);
  });

  it("a missing file holds nothing", () => {
    expect(fileHolds(join(dir, "none.json"), Buffer.alloc(0))).toBe(false);
  });
});
