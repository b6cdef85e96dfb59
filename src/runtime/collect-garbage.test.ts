import { getHeapSpaceStatistics, getHeapStatistics } from "node:v8";
import { describe, expect, it } from "vitest";
import { collectGarbage } from "./collect-garbage.js";

describe("collectGarbage", () => {
  it("collects what nothing holds any more, at once", () => {
    let garbage: string[][] | undefined = Array.from({ length: 200 }, (_, i) =>
      Array.from({ length: 1000 }, (_, j) => `${i}:${j}:${"x".repeat(40)}`),
    );
    const withGarbage = getHeapStatistics().used_heap_size;
    expect(garbage.length).toBe(200);
    garbage = undefined;
    collectGarbage();
    const after = getHeapStatistics().used_heap_size;
    // 200,000 strings of ~50 bytes: over 10 MB gone.
    expect(withGarbage - after).toBeGreaterThan(10 * 1024 * 1024);
    expect(garbage).toBeUndefined();
  });
});

describe("collectGarbage({ compact: true })", () => {
  const oldSpace = () => getHeapSpaceStatistics().find((s) => s.space_name === "old_space")?.space_size ?? 0;

  it("gives back the pages plain collections leave half empty", () => {
    // 300,000 objects in the old generation, then every other one let go: each page keeps half of what it held.
    let all: { i: number; text: string }[] | undefined = Array.from({ length: 300_000 }, (_, i) => ({
      i,
      text: `${i}:${"y".repeat(60)}`,
    }));
    collectGarbage();
    const kept = all.filter((_, i) => i % 2 === 0);
    all = undefined;
    // Twice: whatever the first one's sweeping left for later is done.
    collectGarbage();
    collectGarbage();
    const plain = oldSpace();
    collectGarbage({ compact: true });
    const compacted = oldSpace();
    expect(kept).toHaveLength(150_000);
    expect(all).toBeUndefined();
    // About 90 MB of pages, half of it held: some 40 MB given back (a plain collection gives back none of it).
    expect(plain - compacted).toBeGreaterThan(20 * 1024 * 1024);
  });
});
