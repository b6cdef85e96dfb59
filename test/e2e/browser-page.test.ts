import { describe, expect, it } from "vitest";
import { contrastRatio, parseRgb } from "./browser-page.js";

describe("contrastRatio (WCAG 2)", () => {
  it.each([
    ["rgb(0, 0, 0)", "rgb(255, 255, 255)", 21],
    ["rgb(255, 255, 255)", "rgb(255, 255, 255)", 1],
    // #777 on white: the classic just-below-AA grey.
    ["rgb(119, 119, 119)", "rgb(255, 255, 255)", 4.48],
    // The dark-mode Send button before the fix: white on #6aa6ff.
    ["rgb(255, 255, 255)", "rgb(106, 166, 255)", 2.47],
  ])("%s on %s is %d:1", (fg, bg, ratio) => {
    expect(contrastRatio(fg, bg)).toBeCloseTo(ratio, 2);
  });

  it("refuses what it cannot compute from", () => {
    expect(() => parseRgb("#fff")).toThrow("not an rgb() colour");
    expect(() => parseRgb("rgba(0, 0, 0, 0.5)")).toThrow("translucent");
    expect(parseRgb("rgba(1, 2, 3, 1)")).toEqual([1, 2, 3]);
  });
});
