import { describe, expect, it } from "vitest";
import { UpdateLedger } from "./update-ledger.js";

describe("UpdateLedger", () => {
  it("the offset passes an update only once it and every one below it settled", () => {
    const ledger = new UpdateLedger(undefined);
    expect(ledger.offset()).toBeUndefined();
    expect([10, 11, 12].map((id) => ledger.take(id))).toEqual([true, true, true]);
    expect(ledger.offset()).toBe(10);
    ledger.settle(11, true);
    ledger.settle(12, true);
    expect(ledger.offset()).toBe(10);
    // Telegram sends 10..12 again while 10 is open: none of them is new.
    expect([10, 11, 12].map((id) => ledger.take(id))).toEqual([false, false, false]);
    expect(ledger.take(13)).toBe(true);
    ledger.settle(10, true);
    expect(ledger.offset()).toBe(13);
    ledger.settle(13, true);
    expect(ledger.offset()).toBe(14);
    expect(ledger.openCount).toBe(0);
  });

  it("a failed update holds the offset and is taken again; the saved offset skips older ones", () => {
    const ledger = new UpdateLedger(100);
    expect(ledger.take(99)).toBe(false);
    expect(ledger.offset()).toBe(100);
    ledger.take(100);
    ledger.take(101);
    ledger.settle(100, false);
    ledger.settle(101, true);
    expect(ledger.hasFailed).toBe(true);
    expect(ledger.offset()).toBe(100);
    expect(ledger.take(101)).toBe(false);
    expect(ledger.take(100)).toBe(true);
    expect(ledger.hasFailed).toBe(false);
    ledger.settle(100, true);
    expect(ledger.offset()).toBe(102);
  });
});
