import { describe, expect, it } from "vitest";
import { splitMessage, TELEGRAM_TEXT_LIMIT } from "./split-message.js";

const fenceCount = (part: string) => part.split("\n").filter((line) => /^\s{0,3}```/.test(line)).length;

describe("splitMessage", () => {
  it("keeps a short text whole", () => {
    expect(splitMessage("  hello  ")).toEqual(["hello"]);
    expect(splitMessage("")).toEqual([]);
  });

  it("prefers paragraph, then line, then word breaks", () => {
    expect(splitMessage(`${"a".repeat(30)}\n\n${"b".repeat(30)}`, 40)).toEqual([
      "a".repeat(30),
      "b".repeat(30),
    ]);
    expect(splitMessage(`${"a".repeat(30)}\n${"b".repeat(30)}`, 40)).toEqual([
      "a".repeat(30),
      "b".repeat(30),
    ]);
    expect(splitMessage(`${"a ".repeat(15)}${"b".repeat(20)}`, 40)).toEqual([
      `${"a ".repeat(15).trim()}`,
      "b".repeat(20),
    ]);
    expect(splitMessage("x".repeat(100), 40)).toEqual(["x".repeat(39), "x".repeat(39), "x".repeat(22)]);
  });

  it("splits 10,000 characters into parts of at most 4096 that join back to the text", () => {
    const text = Array.from({ length: 200 }, (_, i) => `line ${i} ${"w ".repeat(20)}`.trim()).join("\n");
    const parts = splitMessage(text);
    expect(parts.length).toBeGreaterThan(1);
    for (const part of parts) expect(part.length).toBeLessThanOrEqual(TELEGRAM_TEXT_LIMIT);
    expect(parts.join("\n")).toBe(text);
  });

  it("keeps code fences balanced across parts, reopening with the same info string", () => {
    const code = Array.from({ length: 30 }, (_, i) => `let x${i} = ${i};`).join("\n");
    const text = `intro\n\n\`\`\`ts\n${code}\n\`\`\`\n\noutro`;
    const parts = splitMessage(text, 120);
    expect(parts.length).toBeGreaterThan(2);
    for (const part of parts) {
      expect(part.length).toBeLessThanOrEqual(120);
      expect(fenceCount(part) % 2).toBe(0);
    }
    expect(parts[1]!.startsWith("```ts\n")).toBe(true);
    const body = parts.join("\n").replace(/\n```\n```ts/g, "");
    expect(body).toBe(text);
  });

  it("is deterministic and always ends", () => {
    const text = `\`\`\`${"i".repeat(300)}\n${"c".repeat(300)}`;
    const parts = splitMessage(text, 100);
    expect(splitMessage(text, 100)).toEqual(parts);
    for (const part of parts) expect(part.length).toBeLessThanOrEqual(100);
  });
});
