import { describe, expect, it } from "vitest";
import { formatAge, formatTokens } from "../core/format.js";
import { formatContext, renderTable, renderTsv } from "./format-table.js";

describe("formatAge", () => {
  it.each([
    [0, "0s"],
    [-5000, "0s"],
    [59_999, "59s"],
    [60_000, "1m"],
    [3 * 60_000 + 59_000, "3m"],
    [3_600_000, "1h"],
    [2 * 3_600_000 + 59 * 60_000, "2h"],
    [86_400_000, "1d"],
    [5 * 86_400_000 + 1, "5d"],
    [Number.NaN, "0s"],
  ])("%d ms -> %s", (ms, text) => {
    expect(formatAge(ms)).toBe(text);
  });
});

describe("formatTokens", () => {
  it.each([
    [0, "0"],
    [950, "950"],
    [1000, "1k"],
    [1500, "1.5k"],
    [12_345, "12.3k"],
    [99_960, "100k"],
    [128_000, "128k"],
    [999_499, "999k"],
    [1_200_000, "1.2M"],
  ])("%d -> %s", (n, text) => {
    expect(formatTokens(n)).toBe(text);
  });
});

describe("formatContext", () => {
  it.each([
    [12_300, 128_000, false, "12.3k/128k (9%)"],
    [128_000, 128_000, false, "128k/128k (100%)"],
    [127_999, 128_000, false, "128k/128k (99%)"],
    [500, undefined, false, "500"],
    [5000, 8000, true, "~5k/8k (62%)"],
    [undefined, 128_000, false, "-"],
  ])("%s of %s (estimated %s) -> %s", (used, window, estimated, text) => {
    expect(formatContext(used, window, estimated)).toBe(text);
  });
});

describe("renderTable", () => {
  it("aligns columns under the header and does not pad the last column", () => {
    const text = renderTable(
      ["KIND", "KEY", "AGE"],
      [
        ["direct", "main", "3m"],
        ["group", "group:-1001234", "2h"],
      ],
    );
    expect(text.split("\n")).toEqual([
      "KIND    KEY             AGE",
      "direct  main            3m",
      "group   group:-1001234  2h",
    ]);
  });

  it("fills missing cells and flattens newlines and tabs", () => {
    expect(renderTable(["A", "B"], [["x\ny"], ["1", "2\t3"]]).split("\n")).toEqual([
      "A    B",
      "x y",
      "1    2 3",
    ]);
  });
});

describe("renderTsv", () => {
  it("writes one tab-separated line per row", () => {
    expect(
      renderTsv([
        ["a", "b c"],
        ["d\te", ""],
      ]),
    ).toBe("a\tb c\nd e\t");
  });
});
