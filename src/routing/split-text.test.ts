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

describe("splitText: code fences", () => {
  const isBalanced = (part: string) => part.split("\n").filter((l) => /^\s*```/.test(l)).length % 2 === 0;

  it("closes a code block at the cut and opens it again with its language in the next part", () => {
    const code = Array.from({ length: 40 }, (_, i) => `const line${i} = ${i};`).join("\n");
    const text = `Here is the code:\n\n\`\`\`ts\n${code}\n\`\`\`\n\nThat is all.`;
    const parts = splitText(text, 200);
    expect(parts.length).toBeGreaterThan(2);
    for (const part of parts) {
      expect(part.length).toBeLessThanOrEqual(200);
      expect(isBalanced(part)).toBe(true);
    }
    expect(parts[1]!.startsWith("```ts\n")).toBe(true);
    const rejoined = parts
      .join("\n")
      .replace(/\n```\n```ts\n/g, "\n")
      .replace(/\s+/g, " ");
    for (let i = 0; i < 40; i++) expect(rejoined).toContain(`const line${i} = ${i};`);
  });

  it("leaves text without fences as before, and a fence-only text still shrinks", () => {
    expect(splitText("aaaa bbbb cccc dddd", 12)).toEqual(["aaaa bbbb", "cccc dddd"]);
    const parts = splitText(`\`\`\`${"x".repeat(50)}`, 20);
    expect(parts.every((p) => p.length <= 20)).toBe(true);
    expect(parts.length).toBeGreaterThan(1);
  });

  it("a tilde fence and a longer backtick fence are tracked by their own marker", () => {
    const body = Array.from({ length: 30 }, (_, i) => `row ${i}`).join("\n");
    const parts = splitText(`~~~\n${body}\n~~~`, 60);
    for (const part of parts) expect(part.split("\n").filter((l) => l.startsWith("~~~")).length % 2).toBe(0);
    const nested = splitText(`\`\`\`\`md\n\`\`\`js\nx\n\`\`\`\n${body}\n\`\`\`\``, 60);
    expect(nested[1]!.startsWith("````md\n")).toBe(true);
  });
});
