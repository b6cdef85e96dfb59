import { describe, expect, it } from "vitest";
import { lineColumnAt, locateJsonError, serializeStore, storeParseReason } from "./store-parse.js";

describe("lineColumnAt", () => {
  it.each<[string, number, number, number]>([
    ["abc", 0, 1, 1],
    ["abc", 2, 1, 3],
    ["ab\ncd", 3, 2, 1],
    ["ab\ncd", 4, 2, 2],
    ["ab\r\ncd", 4, 2, 1],
    ["ab\rcd", 3, 2, 1],
    ["a\n\n\nb", 4, 4, 1],
    ["abc", 99, 1, 4],
  ])("%j at %i is line %i, column %i", (text, offset, line, column) => {
    expect(lineColumnAt(text, offset)).toEqual({ line, column });
  });
});

describe("locateJsonError", () => {
  it.each<[string, string, number, number, string]>([
    [
      "a cut-off save",
      '{ "main": { "sessionId": "s1", ',
      1,
      32,
      "the file ends before the closing '}' (cut short, or a bracket missing?)",
    ],
    ["a missing comma", '{\n  "a": 1\n  "b": 2\n}', 3, 3, "expected ',' or '}', found '\"'"],
    ["a trailing comma", '{\n  "a": 1,\n}', 3, 1, "expected a double-quoted key, found '}'"],
    ["a trailing comma in a list", "[1,]", 1, 4, "expected a value, found ']'"],
    ["a single-quoted key", "{'a': 1}", 1, 2, "expected a double-quoted key or '}', found '''"],
    ["a missing colon", '{"a" 1}', 1, 6, "expected ':', found '1'"],
    ["a bare word", '{"a": soon}', 1, 7, "expected a value, found 's'"],
    ["a misspelt literal", '{"a": tru}', 1, 10, "expected true"],
    ["text after the object", '{"a": 1}}', 1, 9, "expected the end of the file, found '}'"],
    [
      "a control character in a string",
      '{"a": "x\ty"}',
      1,
      9,
      "a control character (U+0009) inside a string",
    ],
    ["a bad escape", '{"a": "\\x"}', 1, 8, "a bad escape \\x in a string"],
    ["a bad unicode escape", '{"a": "\\u12g4"}', 1, 8, "a bad \\u escape in a string"],
    ["an unclosed string", '{"a": "abc', 1, 11, "the file ends inside a string (a missing closing quote?)"],
    ["a leading zero", '{"a": 012}', 1, 8, "a number that is not valid JSON (at '1')"],
    ["a bare minus", '{"a": -}', 1, 7, "a number that is not valid JSON"],
    ["a closing bracket of the wrong kind", '{"a": [1}', 1, 9, "expected ',' or ']', found '}'"],
    ["an empty text", "", 1, 1, "expected a value, the file ends"],
    ["lines after CRLF", '{\r\n"a": 1\r\n"b"}', 3, 1, "expected ',' or '}', found '\"'"],
    ["a byte order mark is not counted", '\uFEFF{"a" 1}', 1, 6, "expected ':', found '1'"],
  ])("%s", (_name, text, line, column, problem) => {
    expect(JSON.parse.bind(null, text)).toThrow();
    expect(locateJsonError(text)).toMatchObject({ line, column, problem });
  });

  it("finds nothing wrong in valid JSON, however deep", () => {
    for (const text of [
      "{}",
      "[]",
      ' { "a" : [ 1 , -2.5e+3 , true , false , null , "x\\n\\u00e9\\"" , { } ] } ',
      "0",
      '"s"',
      serializeStore({ main: { sessionId: "s", updatedAt: 1, origin: { chatId: "-1" } } }),
      `${"[".repeat(100_000)}${"]".repeat(100_000)}`,
      `[${"9".repeat(1000)}]`,
    ]) {
      expect(locateJsonError(text), text.slice(0, 40)).toBeUndefined();
    }
  });

  it("agrees with JSON.parse on every one-character edit of a store", () => {
    const store = serializeStore({
      main: { sessionId: "s-1", updatedAt: 1764000000000, model: "gpt-4o", contextEstimated: false },
      "group:-100": { sessionId: "g", updatedAt: -1.5e3, origin: null, list: [1, "a\\b", {}] },
    });
    const inserts = ['"', ",", ":", "{", "}", "[", "]", "x", "0", "-", ".", "e", "\\", " ", "\t", "\n"];
    let checked = 0;
    for (let i = 0; i <= store.length; i++) {
      const edits = [
        store.slice(0, i) + store.slice(i + 1),
        ...inserts.map((c) => store.slice(0, i) + c + store.slice(i)),
      ];
      for (const text of edits) {
        let valid = true;
        try {
          JSON.parse(text);
        } catch {
          valid = false;
        }
        expect(locateJsonError(text) === undefined, JSON.stringify(text)).toBe(valid);
        checked += 1;
      }
    }
    expect(checked).toBeGreaterThan(3000);
  });
});

describe("storeParseReason", () => {
  it("gives a line and column instead of JSON.parse's position", () => {
    expect(storeParseReason('{\n  "a": 1\n  "b": 2\n}', "not valid JSON (… at position 13)")).toBe(
      "not valid JSON at line 3, column 3: expected ',' or '}', found '\"'",
    );
  });

  it("keeps the reason of a blank file and of valid JSON of the wrong shape", () => {
    expect(storeParseReason("  \n", "the file is empty")).toBe("the file is empty");
    expect(storeParseReason("\uFEFF", "the file is empty")).toBe("the file is empty");
    expect(storeParseReason("[]", "expected a JSON object of sessionKey -> entry, found an array")).toBe(
      "expected a JSON object of sessionKey -> entry, found an array",
    );
  });
});
