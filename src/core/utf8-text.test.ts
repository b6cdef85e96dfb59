import { describe, expect, it } from "vitest";
import { utf8Text } from "./utf8-text.js";

describe("utf8Text", () => {
  const long = "a".repeat(5000);
  const cases: [string, Buffer][] = [
    ["empty", Buffer.alloc(0)],
    ["short ASCII", Buffer.from('{"op":"end"}')],
    ["long ASCII", Buffer.from(`{"text":"${long}"}`)],
    ["long, one character of two bytes at the end", Buffer.from(`${long}é`)],
    ["long, an emoji in the middle", Buffer.from(`${long}😀${long}`)],
    [
      "long, a byte that is no UTF-8",
      Buffer.concat([Buffer.from(long), Buffer.from([0xff]), Buffer.from(long)]),
    ],
    ["long, a sequence cut short at the end", Buffer.from(`${long}😀`).subarray(0, long.length + 2)],
    ["short, a byte of 0x80", Buffer.from([0x61, 0x80, 0x62])],
  ];
  it.each(cases)("%s: the string toString('utf8') gives", (_name, bytes) => {
    expect(utf8Text(bytes)).toBe(bytes.toString("utf8"));
  });

  it("decodes only its own bytes when it is a view into a larger buffer", () => {
    const whole = Buffer.from(`é${long}é`);
    const view = whole.subarray(2, 2 + long.length);
    expect(utf8Text(view)).toBe(long);
    const withTail = whole.subarray(2);
    expect(utf8Text(withTail)).toBe(`${long}é`);
  });
});
