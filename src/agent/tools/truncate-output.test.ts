import { describe, expect, it } from "vitest";
import { HeadTailBuffer } from "./truncate-output.js";

describe("HeadTailBuffer", () => {
  it("keeps everything under the limit", () => {
    const buffer = new HeadTailBuffer(10);
    buffer.push(Buffer.from("abc"));
    buffer.push(Buffer.from("def"));
    expect(buffer.truncated).toBe(false);
    expect(buffer.toString()).toBe("abcdef");
  });

  it("keeps head and tail across many chunks and counts what it dropped", () => {
    const buffer = new HeadTailBuffer(10);
    for (const piece of ["01234", "56789", "abcde", "fghij", "KLMNO"]) buffer.push(Buffer.from(piece));
    expect(buffer.totalBytes).toBe(25);
    expect(buffer.toString()).toBe("01234\n[… 15 bytes omitted …]\nKLMNO");
  });

  it("does not leave broken characters at the cut", () => {
    const buffer = new HeadTailBuffer(11);
    buffer.push(Buffer.from("ä".repeat(50), "utf8"));
    const cut = buffer.toString();
    expect(cut).not.toContain("\uFFFD");
    expect(cut).toMatch(/^ä+\n\[… \d+ bytes omitted …\]\nä+$/);
  });
});
