import { describe, expect, it } from "vitest";
import { snippetOf } from "./search-snippet.js";

/** The snippet with the match in brackets: what a terminal marks. */
function marked(text: string, query: string, width?: number): string {
  const start = text.indexOf(query);
  const s = snippetOf(text, start, start + query.length, width);
  return `${s.text.slice(0, s.start)}[${s.text.slice(s.start, s.end)}]${s.text.slice(s.end)}`;
}

describe("search snippet", () => {
  it.each([
    ["a short message", "short", "a [short] message"],
    ["line one\n\n  line two", "line two", "line one [line two]"],
    ["bell\u0007 and \u001b[2J escape", "escape", "bell? and ?[2J [escape]"],
    [`${"x".repeat(100)} needle tail`, "needle", `…${"x".repeat(58)} [needle] tail`],
    [`start needle ${"y".repeat(200)}`, "needle", `start [needle] ${"y".repeat(146)}…`],
  ])("%j around %j", (text, query, expected) => {
    expect(marked(text, query)).toBe(expected);
  });

  it("cuts a match longer than the width", () => {
    expect(marked(`a ${"m".repeat(50)} b`, "m".repeat(50), 20)).toBe(`…[${"m".repeat(18)}…]`);
  });

  it("never cuts a surrogate pair in two", () => {
    const text = `${"😀".repeat(40)}needle${"😀".repeat(100)}`;
    const s = snippetOf(text, 80, 86);
    expect(s.text.slice(s.start, s.end)).toBe("needle");
    expect(s.text).not.toMatch(/[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/);
    expect(s.text.length).toBeLessThanOrEqual(160);
  });
});
