import { describe, expect, it } from "vitest";
import { markdownToWhatsapp, splitForWhatsapp } from "./markdown-to-whatsapp.js";

describe("markdownToWhatsapp", () => {
  it.each([
    ["**bold**", "*bold*"],
    ["__bold__", "*bold*"],
    ["*italic* and _italic_", "_italic_ and _italic_"],
    ["~~gone~~", "~gone~"],
    ["a **b** *c* ~~d~~", "a *b* _c_ ~d~"],
    ["# Title", "*Title*"],
    ["### **Already bold**", "*Already bold*"],
    ["see [the docs](https://example.org/x)", "see the docs (https://example.org/x)"],
    ["[https://a.b](https://a.b)", "https://a.b"],
    ["* one\n* two", "- one\n- two"],
    ["- one", "- one"],
    ["use `**not bold**` here", "use `**not bold**` here"],
    ["2 * 3 * 4", "2 * 3 * 4"],
    ["snake_case_name", "snake_case_name"],
    ["plain text", "plain text"],
  ])("%j -> %j", (input, expected) => {
    expect(markdownToWhatsapp(input)).toBe(expected);
  });

  it("keeps code blocks as they are and drops the fence's language", () => {
    expect(markdownToWhatsapp("**x**\n```ts\nconst a = **b**;\n# not a heading\n```\n**y**")).toBe(
      "*x*\n```\nconst a = **b**;\n# not a heading\n```\n*y*",
    );
  });
});

describe("splitForWhatsapp", () => {
  it("keeps a short reply whole, formatted", () => {
    expect(splitForWhatsapp("**hi** there")).toEqual(["*hi* there"]);
    expect(splitForWhatsapp("  \n ")).toEqual([]);
  });

  it("cuts at paragraphs, then lines, then words, every part within the limit", () => {
    const paragraphs = ["a".repeat(30), "b".repeat(30), "c".repeat(30)].join("\n\n");
    expect(splitForWhatsapp(paragraphs, 70)).toEqual([
      `${"a".repeat(30)}\n\n${"b".repeat(30)}`,
      "c".repeat(30),
    ]);
    const words = Array.from({ length: 40 }, (_, i) => `w${i}`).join(" ");
    const parts = splitForWhatsapp(words, 50);
    expect(parts.every((p) => p.length <= 50)).toBe(true);
    expect(parts.join(" ")).toBe(words);
    expect(parts.every((p) => !p.startsWith(" ") && !p.endsWith(" "))).toBe(true);
  });

  it("cuts a word longer than the limit hard", () => {
    const parts = splitForWhatsapp("x".repeat(100), 40);
    expect(parts.join("")).toBe("x".repeat(100));
    expect(parts.every((p) => p.length <= 40)).toBe(true);
  });

  it("closes a code block at a cut and opens it again in the next part", () => {
    const code = Array.from({ length: 20 }, (_, i) => `line ${i}`).join("\n");
    const parts = splitForWhatsapp(`intro\n\`\`\`js\n${code}\n\`\`\`\nend`, 60);
    expect(parts.length).toBeGreaterThan(2);
    for (const part of parts) {
      expect(part.length).toBeLessThanOrEqual(60);
      expect((part.match(/```/g) ?? []).length % 2).toBe(0);
    }
    expect(parts[1]?.startsWith("```\n")).toBe(true);
    const lines = parts
      .join("\n")
      .split("\n")
      .filter((l) => l.startsWith("line "));
    expect(lines).toEqual(code.split("\n"));
  });

  it("is deterministic", () => {
    const text = Array.from({ length: 300 }, (_, i) => `**word${i}**`).join(" ");
    expect(splitForWhatsapp(text, 200)).toEqual(splitForWhatsapp(text, 200));
  });
});
