import { describe, expect, it } from "vitest";
import { PendingWork } from "./pending-work.js";

describe("PendingWork", () => {
  it("adds once, deletes, counts and iterates in order, as a Set does", () => {
    const work = new PendingWork<string>();
    work.add("a").add("b").add("a");
    expect(work.size).toBe(2);
    expect([...work]).toEqual(["a", "b"]);
    expect(work.delete("a")).toBe(true);
    expect(work.delete("a")).toBe(false);
    expect([...work]).toEqual(["b"]);
    expect(work.size).toBe(1);
  });

  it("an item removed while iterating does not disturb the iteration", () => {
    const work = new PendingWork<number>();
    for (const n of [1, 2, 3]) work.add(n);
    const seen: number[] = [];
    for (const n of work) {
      seen.push(n);
      work.delete(n);
    }
    expect(seen).toEqual([1, 2, 3]);
    expect(work.size).toBe(0);
  });
});
