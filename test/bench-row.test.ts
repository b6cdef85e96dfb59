import { describe, expect, it } from "vitest";
import { type BenchRow, describeTarget, formatTable, machineLine, verdict } from "../bench/bench-row.js";

const row = (
  ours: number[],
  baseline: number[],
  target: BenchRow["target"],
  extra: Partial<BenchRow> = {},
): BenchRow => ({
  name: "r",
  unit: "ms",
  ours,
  baselineName: "b",
  baseline,
  target,
  ...extra,
});

describe("verdict", () => {
  it.each([
    ["ratio met at the bound", row([2], [1], { kind: "ratio", max: 2 }), true],
    ["ratio over", row([2.01], [1], { kind: "ratio", max: 2 }), false],
    ["ratio on the p99", row([1, 1, 1, 9], [1, 1, 1, 5], { kind: "ratio", max: 2, on: "p99" }), true],
    ["ratio on the p99, over", row([1, 1, 1, 11], [1, 1, 1, 5], { kind: "ratio", max: 2, on: "p99" }), false],
    ["a rate at least 0.6x its baseline", row([600], [1000], { kind: "ratio-above", min: 0.6 }), true],
    ["a rate under 0.6x", row([599], [1000], { kind: "ratio-above", min: 0.6 }), false],
    ["a bound", row([150], [], { kind: "below", max: 150 }), true],
    ["above", row([1499], [], { kind: "above", min: 1500 }), false],
    ["no target", row([1], [1], undefined), undefined],
  ])("%s", (_name, r, expected) => {
    expect(verdict(r)).toBe(expected);
  });

  it("says each target as the table prints it", () => {
    expect(describeTarget({ kind: "ratio-above", min: 0.6 }, "msg/s")).toBe("≥ 0.6x");
    expect(describeTarget({ kind: "ratio", max: 2, on: "p99" }, "ms")).toBe("p99 ≤ 2x");
    expect(formatTable([row([500], [1000], { kind: "ratio-above", min: 0.6 })])).toMatch(
      /0\.50x \| ≥ 0\.6x \| NO/,
    );
  });
});

describe("machineLine", () => {
  it("prints the load at both ends and the floors of the run, each once", () => {
    const rows = [
      row(
        [1700],
        [5600],
        { kind: "ratio-above", min: 0.6 },
        { name: "messages/s", unit: "msg/s", baselineName: "bare relay, same HTTP hops" },
      ),
      row([0.7], [0.5], undefined, { name: "latency", baselineName: "bare relay, same HTTP hops" }),
      row([90], [60], undefined, { name: "clawdis --version, cold", baselineName: "node -e 0" }),
      row([120], [62], undefined, { name: "clawdis status, cold", baselineName: "node -e 0" }),
      row([1], [1], undefined, { name: "store", baselineName: "a rewrite" }),
    ];
    const text = machineLine(rows, { start: [1, 0.5, 0.25], end: [2, 1, 0.5], cores: 2 });
    expect(text.split("\n")).toEqual([
      "machine: 2 cores, load average 1.00 0.50 0.25 at the start, 2.00 1.00 0.50 at the end",
      "floors of this run: bare relay 5600 msg/s (messages/s); bare relay 0.50 ms (latency); node -e 0 60.0 ms (clawdis --version, cold)",
    ]);
  });
});
