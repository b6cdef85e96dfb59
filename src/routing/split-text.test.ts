import { describe, expect, it } from "vitest";
import { splitText } from "./split-text.js";

describe("splitText", () => {
  it("keeps a short text whole", () => {
    expect(splitText("hello", 10)).toEqual(["hello"]);
  });

  it("prefers paragraph breaks, then lines, then words", () => {
    expect(splitText("aaaa bbbb\n\ncccc dddd", 12)).toEqual(["aaaa bbbb", "cccc dddd"]);
    expect(splitText("aaaa bbbb\ncccc dddd", 12)).toEqual(["aaaa bbbb", "cccc dddd"]);
    expect(splitText("aaaa bbbb cccc dddd", 12)).toEqual(["aaaa bbbb", "cccc dddd"]);
  });

  it("cuts a word longer than the limit hard, and never exceeds the limit", () => {
    const parts = splitText("x".repeat(25), 10);
    expect(parts).toEqual(["x".repeat(10), "x".repeat(10), "x".repeat(5)]);
    const long = Array.from({ length: 500 }, (_, i) => `word${i}`).join(" ");
    const split = splitText(long, 97);
    expect(split.every((p) => p.length <= 97 && p.length > 0)).toBe(true);
    expect(split.join(" ")).toBe(long);
  });

  it("returns nothing for whitespace only", () => {
    expect(splitText("  \n ", 10)).toEqual([]);
  });
});
