import { describe, expect, it } from "vitest";
import { ManualClock } from "../core/clock.js";
import { DEFER_QUIET_MS, UpdateBatches } from "./store-batches.js";

/** Batches whose runs are recorded and finished by the test (`finish`), closing at once as a lock would. */
function harness() {
  const clock = new ManualClock(0);
  const runs: { items: string[]; at: number; finish: () => void }[] = [];
  const batches = new UpdateBatches<string>(clock, (items) => {
    batches.close(items);
    return new Promise<void>((resolve) => {
      runs.push({ items: [...items], at: clock.now(), finish: resolve });
    });
  });
  return { clock, runs, batches };
}

describe("UpdateBatches (group commit, write-behind)", () => {
  it("an update that may not wait starts its batch at once", () => {
    const { runs, batches } = harness();
    batches.add("a");
    expect(runs.map((r) => r.items)).toEqual([["a"]]);
  });

  it("deferred updates wait for a quiet moment, then run as one batch, in order", () => {
    const { clock, runs, batches } = harness();
    batches.add("a", 1000);
    clock.advance(DEFER_QUIET_MS - 1);
    batches.add("b", 1000);
    clock.advance(DEFER_QUIET_MS - 1);
    expect(runs).toEqual([]);
    expect(batches.waiting).toBe(2);
    clock.advance(1);
    expect(runs.map((r) => r.items)).toEqual([["a", "b"]]);
    expect(runs[0]!.at).toBe(DEFER_QUIET_MS - 1 + DEFER_QUIET_MS);
    expect(batches.waiting).toBe(0);
  });

  it("updates that keep coming never wait longer than the smallest deferMs among them", () => {
    const { clock, runs, batches } = harness();
    batches.add("first", 100);
    for (let i = 0; i < 30; i++) {
      clock.advance(5);
      batches.add(`u${i}`, 1000);
    }
    expect(runs).toHaveLength(1);
    expect(runs[0]!.at).toBe(100);
    expect(runs[0]!.items).toEqual(["first", ...Array.from({ length: 19 }, (_, i) => `u${i}`)]);
  });

  it("a prompt update carries the waiting ones along; a later one starts a new batch", () => {
    const { clock, runs, batches } = harness();
    batches.add("a", 1000);
    batches.add("b", 1000);
    batches.add("now");
    expect(runs.map((r) => r.items)).toEqual([["a", "b", "now"]]);
    batches.add("c", 1000);
    expect(batches.waiting).toBe(1);
    clock.advance(DEFER_QUIET_MS);
    expect(runs.map((r) => r.items)).toEqual([["a", "b", "now"], ["c"]]);
  });

  it("a started batch takes more updates until its lock is taken", () => {
    const clock = new ManualClock(0);
    const runs: string[][] = [];
    let take!: () => void;
    const batches = new UpdateBatches<string>(clock, async (items) => {
      await new Promise<void>((resolve) => {
        take = resolve;
      });
      batches.close(items);
      runs.push([...items]);
    });
    batches.add("a");
    batches.add("b", 1000);
    take();
    return Promise.resolve().then(() => {
      expect(runs).toEqual([["a", "b"]]);
    });
  });

  it("flush starts the waiting batch and resolves once it ran", async () => {
    const { runs, batches } = harness();
    batches.add("a", 1000);
    let flushed = false;
    const flushing = batches.flush().then(() => {
      flushed = true;
    });
    expect(runs.map((r) => r.items)).toEqual([["a"]]);
    await Promise.resolve();
    expect(flushed).toBe(false);
    runs[0]!.finish();
    await flushing;
    expect(flushed).toBe(true);
  });
});
