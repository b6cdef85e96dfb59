import { describe, expect, it } from "vitest";
import { count } from "./plural.js";

describe("count", () => {
  it.each<[number, string, string | undefined, string]>([
    [0, "problem", undefined, "0 problems"],
    [1, "problem", undefined, "1 problem"],
    [2, "problem", undefined, "2 problems"],
    [1, "entry", "entries", "1 entry"],
    [3, "entry", "entries", "3 entries"],
  ])("%i %s", (n, singular, plural, expected) => {
    expect(count(n, singular, plural)).toBe(expected);
  });
});
