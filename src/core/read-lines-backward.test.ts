import { closeSync, openSync } from "node:fs";
import { mkdtemp, open, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type BackwardLine, type BackwardOptions, readAt, readLinesBackward } from "./read-lines-backward.js";

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "clawdis-backward-"));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

/** A small seeded PRNG (mulberry32), so every run builds the same files. */
function random(seed: number): () => number {
  let a = seed;
  return () => {
    a = (a + 0x6d2b79f5) | 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** The lines of `bytes[floor, end)` split forwards, newest first: what the backward reader must yield. */
function expected(bytes: Buffer, floor: number, end: number): { offset: number; text: string }[] {
  const out: { offset: number; text: string }[] = [];
  let start = floor;
  for (let i = floor; i < end; i++) {
    if (bytes[i] === 0x0a) {
      out.push({ offset: start, text: bytes.subarray(start, i).toString("latin1") });
      start = i + 1;
    }
  }
  if (end > floor) out.push({ offset: start, text: bytes.subarray(start, end).toString("latin1") });
  return out.reverse();
}

async function collect(path: string, options: Omit<BackwardOptions, "scan">) {
  const scan = { bytesRead: 0, cut: false };
  const handle = await open(path, "r");
  const lines: BackwardLine[] = [];
  try {
    for await (const line of readLinesBackward(handle, { ...options, scan })) lines.push(line);
  } finally {
    await handle.close();
  }
  const texts = lines.map((l) => ({
    offset: l.offset,
    text: l.bytes?.toString("latin1") ?? `<${l.length}>`,
  }));
  return { lines, texts, scan };
}

describe("readLinesBackward", () => {
  it("agrees with a forward split on random files, chunk-spanning lines and any floor/end", async () => {
    const next = random(42);
    for (let round = 0; round < 40; round++) {
      // Lines of 0..200 KiB around the 64 KiB chunk size, sometimes no final "\n".
      const parts: string[] = [];
      const count = 1 + Math.floor(next() * 8);
      for (let i = 0; i < count; i++) {
        const kind = next();
        const length = kind < 0.3 ? 0 : kind < 0.8 ? Math.floor(next() * 100) : Math.floor(next() * 200_000);
        parts.push(String.fromCharCode(97 + i).repeat(length));
      }
      const text = parts.join("\n") + (next() < 0.5 ? "\n" : "");
      const bytes = Buffer.from(text, "latin1");
      const path = join(dir, `r${round}.txt`);
      await writeFile(path, bytes);
      // A floor right after some "\n" (the contract), or 0; an end at a line start or the file end.
      const starts = [0, ...expected(bytes, 0, bytes.length).map((l) => l.offset)];
      const floor = starts[Math.floor(next() * starts.length)] as number;
      const ends = [bytes.length, ...starts.filter((s) => s >= floor)];
      const end = ends[Math.floor(next() * ends.length)] as number;
      const { texts, scan } = await collect(path, { floor, end });
      expect(texts, `round ${round}`).toEqual(expected(bytes, floor, end));
      expect(scan.cut).toBe(false);
      expect(scan.bytesRead).toBe(end - floor);
    }
  });

  it("never reads below lowest() - 1 and says the scan was cut", async () => {
    const line = `${"x".repeat(99)}\n`;
    const path = join(dir, "lowest.txt");
    await writeFile(path, line.repeat(10_000)); // 1 MB of 100-byte lines
    const size = 1_000_000;
    const { lines, scan } = await collect(path, { floor: 0, end: size, lowest: () => size - 250 });
    // Lines start at multiples of 100: 999_800 and 999_900 are within 250 bytes, plus the empty piece at the end.
    expect(lines.map((l) => l.offset)).toEqual([size, 999_900, 999_800]);
    expect(scan.cut).toBe(true);
    expect(scan.bytesRead).toBeLessThanOrEqual(251);
  });

  it("takes a line that starts exactly at lowest()", async () => {
    const path = join(dir, "exact.txt");
    await writeFile(path, "aaaa\nbbbb\ncccc\n");
    const { texts, scan } = await collect(path, { floor: 0, end: 15, lowest: () => 5 });
    expect(texts).toEqual([
      { offset: 15, text: "" },
      { offset: 10, text: "cccc" },
      { offset: 5, text: "bbbb" },
    ]);
    expect(scan.cut).toBe(true);
  });

  it("follows a lowest() that changes as lines are taken", async () => {
    const path = join(dir, "moving.txt");
    await writeFile(path, `${"a".repeat(10)}\n${"b".repeat(300_000)}\n${"c".repeat(10)}`);
    let taken = 0;
    const size = 10 + 1 + 300_000 + 1 + 10;
    const scan = { bytesRead: 0, cut: false };
    const handle = await open(path, "r");
    const seen: number[] = [];
    for await (const l of readLinesBackward(handle, {
      floor: 0,
      end: size,
      lowest: () => (taken === 0 ? 0 : size - 100),
      scan,
    })) {
      seen.push(l.length);
      taken++;
    }
    await handle.close();
    expect(seen).toEqual([10]);
    expect(scan.cut).toBe(true);
    expect(scan.bytesRead).toBeLessThanOrEqual(64 * 1024);
  });

  it("scans past a line longer than maxLineBytes without keeping it", async () => {
    const path = join(dir, "long.txt");
    await writeFile(path, `short\n${"L".repeat(200_000)}\nend`);
    const { lines } = await collect(path, { floor: 0, end: 6 + 200_001 + 3, maxLineBytes: 1000 });
    expect(lines.map((l) => [l.offset, l.length, l.bytes?.toString()])).toEqual([
      [200_007, 3, "end"],
      [6, 200_000, undefined],
      [0, 5, "short"],
    ]);
  });

  it("yields nothing for an empty range, and one empty line for a lone newline", async () => {
    const path = join(dir, "nl.txt");
    await writeFile(path, "\n");
    expect((await collect(path, { floor: 0, end: 0 })).lines).toEqual([]);
    expect((await collect(path, { floor: 1, end: 1 })).lines).toEqual([]);
    expect((await collect(path, { floor: 0, end: 1 })).texts).toEqual([
      { offset: 1, text: "" },
      { offset: 0, text: "" },
    ]);
  });

  it("reads through a raw descriptor as through a FileHandle, and leaves it open", async () => {
    const path = join(dir, "raw.txt");
    await writeFile(path, "one\ntwo\nthree");
    const fd = openSync(path, "r");
    try {
      const scan = { bytesRead: 0, cut: false };
      const lines: string[] = [];
      for await (const l of readLinesBackward({ fd }, { floor: 0, end: 13, scan }))
        lines.push(String(l.bytes));
      expect(lines).toEqual((await collect(path, { floor: 0, end: 13 })).texts.map((t) => t.text));
      expect(String(await readAt({ fd }, 4, 3))).toBe("two");
    } finally {
      closeSync(fd);
    }
  });
});
