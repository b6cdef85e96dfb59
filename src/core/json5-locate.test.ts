import JSON5 from "json5";
import { describe, expect, it } from "vitest";
import { isBlankJson5, type Json5Path, locateJson5 } from "./json5-locate.js";

/** Each row: a JSON5 text, a path in it, and the line (and column when given) where that key/element starts. */
const cases: { name: string; text: string; path: Json5Path; line: number; column?: number }[] = [
  { name: "top-level key", text: '{\n  "a": 1\n}', path: ["a"], line: 2, column: 3 },
  { name: "unquoted key", text: "{\n\n  port: 1\n}", path: ["port"], line: 3, column: 3 },
  { name: "single-quoted key", text: "{\n 'a b': 1 }", path: ["a b"], line: 2, column: 2 },
  { name: "nested keys", text: "{ a: {\n b: {\n c: 1 } } }", path: ["a", "b", "c"], line: 3 },
  { name: "array element", text: "{ list: [\n 1,\n 2,\n {x: 3} ] }", path: ["list", 2], line: 4 },
  { name: "key inside array element", text: "{ l: [ {},\n { k:\n 1 } ] }", path: ["l", 1, "k"], line: 2 },
  {
    name: "line comment containing braces and quotes",
    text: '{\n  // { "a": [ } \' \n  a: 1\n}',
    path: ["a"],
    line: 3,
  },
  { name: "block comment spanning lines", text: "{ /* x\n y: 1,\n */ z: 2 }", path: ["z"], line: 3 },
  { name: "block comment is not a key", text: "{ /* y: 1 */ z: 2 }", path: ["y"], line: -1 },
  {
    name: "string with escaped quote and braces",
    text: '{ a: "he said \\"{\\" [",\n b: 1 }',
    path: ["b"],
    line: 2,
  },
  { name: "string with // and /* inside", text: '{ u: "http://x/*y",\n v: 1 }', path: ["v"], line: 2 },
  {
    name: "line continuation inside a string counts the line",
    text: '{ a: "one \\\ntwo",\n b: 1 }',
    path: ["b"],
    line: 3,
  },
  { name: "escaped key is decoded", text: '{ "a\\u0062c": 1 }', path: ["abc"], line: 1 },
  { name: "unicode-escaped unquoted key", text: "{ \\u0061b: 1 }", path: ["ab"], line: 1 },
  { name: "trailing commas", text: "{ a: [1, 2,],\n b: { c: 1, },\n }", path: ["b", "c"], line: 2 },
  { name: "CRLF line endings", text: "{\r\n a: 1,\r\n b: 2\r\n}", path: ["b"], line: 3 },
  { name: "lone CR line endings", text: "{\r a: 1,\r b: 2\r}", path: ["b"], line: 3 },
  { name: "duplicate key: last one wins", text: "{ a: 1,\n b: 2,\n a: 3 }", path: ["a"], line: 3 },
  {
    name: "numbers of every JSON5 kind",
    text: "{ a: +Infinity, b: .5, c: 0x1F,\n d: -1e3 }",
    path: ["d"],
    line: 2,
  },
  { name: "BOM does not shift columns", text: "\uFEFF{ a: 1 }", path: ["a"], line: 1, column: 3 },
  { name: "top level", text: "\n\n  { a: 1 }", path: [], line: 3, column: 3 },
  { name: "missing path", text: "{ a: 1 }", path: ["b"], line: -1 },
];

describe("locateJson5", () => {
  it.each(cases)("$name", ({ text, path, line, column }) => {
    // Every row is valid JSON5, so the locator agrees with what the real parser reads.
    expect(() => JSON5.parse(text)).not.toThrow();
    const location = locateJson5(text).at(path);
    if (line === -1) {
      expect(location).toBeUndefined();
      return;
    }
    expect(location?.line).toBe(line);
    if (column !== undefined) expect(location?.column).toBe(column);
  });

  it("nearest() falls back to the deepest existing ancestor", () => {
    const locator = locateJson5("{\n a: {\n  b: 1 } }");
    expect(locator.nearest(["a", "b", "c", "d"])).toEqual({
      path: ["a", "b"],
      location: { line: 3, column: 3 },
    });
    expect(locator.nearest(["zzz"])?.path).toEqual([]);
  });

  it("lists every key and element", () => {
    const paths = locateJson5("{ a: [1, {b: 2}], c: {} }").paths();
    expect(paths).toEqual([["a"], ["a", 0], ["a", 1], ["a", 1, "b"], ["c"]]);
  });

  it("never throws on broken text and keeps what it found before the damage", () => {
    const broken = ['{ a: 1,\n b: "unterminated', "{ a: [1, 2", "}}}]]", "{ : : , }", "/* open", "{ a b c }"];
    for (const text of broken) {
      expect(() => locateJson5(text).paths()).not.toThrow();
    }
    expect(locateJson5('{ a: 1,\n b: "unterminated').at(["a"])?.line).toBe(1);
    expect(locateJson5("{ a: [1,\n 2").at(["a", 1])?.line).toBe(2);
  });
});

describe("locateJson5().duplicates()", () => {
  /** Each row: a JSON5 text and the duplicated paths with the lines of every occurrence. */
  const rows: { name: string; text: string; want: { path: Json5Path; lines: number[] }[] }[] = [
    { name: "no duplicates", text: "{ a: 1, b: { a: 2 } }", want: [] },
    { name: "top-level key twice", text: "{ a: 1,\n b: 2,\n a: 3 }", want: [{ path: ["a"], lines: [1, 3] }] },
    {
      name: "three times, quoted and unquoted alike",
      text: "{ a: 1,\n \"a\": 2,\n 'a': 3 }",
      want: [{ path: ["a"], lines: [1, 2, 3] }],
    },
    {
      name: "nested key twice",
      text: "{ gateway: {\n port: 1,\n bind: 'x',\n port: 2 } }",
      want: [{ path: ["gateway", "port"], lines: [2, 4] }],
    },
    {
      name: "escaped spelling of the same key",
      text: '{ ab: 1,\n "\\u0061b": 2 }',
      want: [{ path: ["ab"], lines: [1, 2] }],
    },
    { name: "same key in sibling objects is no duplicate", text: "{ a: { x: 1 }, b: { x: 2 } }", want: [] },
    {
      name: "same key in two array elements is no duplicate",
      text: "{ l: [ { x: 1 },\n { x: 2 } ] }",
      want: [],
    },
    {
      name: "a duplicated object reports only its own key",
      text: "{ a: { x: 1 },\n a: { x: 2 } }",
      want: [{ path: ["a"], lines: [1, 2] }],
    },
    {
      name: "duplicate inside an array element",
      text: "{ l: [ {},\n { k: 1,\n k: 2 } ] }",
      want: [{ path: ["l", 1, "k"], lines: [2, 3] }],
    },
    { name: "a key inside a comment is not counted", text: "{ a: 1, /* a: 2 */ }", want: [] },
  ];
  it.each(rows)("$name", ({ text, want }) => {
    expect(() => JSON5.parse(text)).not.toThrow();
    const found = locateJson5(text)
      .duplicates()
      .map((d) => ({ path: d.path, lines: d.locations.map((l) => l.line) }));
    expect(found).toEqual(want);
  });
});

describe("isBlankJson5", () => {
  it.each([
    ["", true],
    ["   \n\t\n", true],
    ["// only a comment\n/* and\n another */", true],
    ["\uFEFF", true],
    ["{}", false],
    ["0", false],
    ["/* unterminated", false],
    ["// c\n{ a: 1 }", false],
  ])("%j -> %s", (text, blank) => {
    expect(isBlankJson5(text)).toBe(blank);
  });
});
