import { describe, expect, it } from "vitest";
import { parseStoreText, serializeStore, usableEntries } from "./store-parse.js";

describe("serializeStore", () => {
  const shapes: Record<string, Record<string, unknown>> = {
    empty: {},
    simple: { main: { sessionId: "a", updatedAt: 1 } },
    nested: {
      main: {
        sessionId: "a",
        updatedAt: 1,
        origin: { channel: "telegram", chatId: "-1" },
        list: [1, [2, {}], []],
      },
      "group:x": { sessionId: "b", updatedAt: 2, empty: {}, none: null, text: 'line\nbreak "quoted" é 😀' },
    },
    oddKeys: { 'we"ird\nkey': { sessionId: "c", updatedAt: 3 }, "": { sessionId: "d", updatedAt: 4 } },
    undefinedFields: { main: { sessionId: "a", updatedAt: 1, gone: undefined } },
  };

  it.each(Object.entries(shapes))("%s: exactly JSON.stringify(raw, null, 2) plus a newline", (_, raw) => {
    const expected = `${JSON.stringify(raw, null, 2)}\n`;
    expect(serializeStore(raw)).toBe(expected);
  });

  it("keeps a __proto__ key as data through parse and serialize", () => {
    const text = '{\n  "__proto__": {\n    "sessionId": "p",\n    "updatedAt": 1\n  }\n}\n';
    const parsed = parseStoreText(text);
    expect(parsed.ok).toBe(true);
    if (!parsed.ok) return;
    expect(Object.keys(parsed.map)).toEqual(["__proto__"]);
    // The key is an own entry, not a prototype; and no map has a prototype to inherit members from.
    expect(Object.getPrototypeOf(parsed.map)).toBeNull();
    expect(Object.getPrototypeOf(parsed.raw)).toBeNull();
    expect(Object.getOwnPropertyDescriptor(parsed.map, "__proto__")?.value).toEqual({
      sessionId: "p",
      updatedAt: 1,
    });
    expect(serializeStore(parsed.raw)).toBe(text);
  });
});

describe("parseStoreText", () => {
  it("reads a file with a byte order mark", () => {
    const parsed = parseStoreText('\ufeff{"main": {"sessionId": "a", "updatedAt": 1}}');
    expect(parsed.ok && parsed.map.main?.sessionId).toBe("a");
  });

  it.each([
    ["", /empty/],
    ["{ oops", /not valid JSON/],
    ["[]", /found an array/],
    ["null", /found null/],
    ['"text"', /found string/],
    ['{"main": []}', /"main" is an array/],
    ['{"main": 1}', /"main" is number/],
  ])("refuses %j", (text, reason) => {
    const parsed = parseStoreText(text);
    expect(parsed.ok).toBe(false);
    if (!parsed.ok) expect(parsed.reason).toMatch(reason);
  });
});

describe("parseStoreText on text that is not JSON", () => {
  it("says the line and column, never JSON.parse's position (what `clawdis sessions` and `status` print)", () => {
    const text =
      '{\n  "main": { "sessionId": "a", "updatedAt": 1 }\n  "work": { "sessionId": "b", "updatedAt": 2 }\n}\n';
    const parsed = parseStoreText(text);
    expect(parsed.ok).toBe(false);
    if (parsed.ok) return;
    expect(parsed.reason).toBe("not valid JSON at line 3, column 3: expected ',' or '}', found '\"'");
    expect(parsed.reason).not.toMatch(/position/);
  });

  it("counts lines after a byte order mark and says a file of only whitespace is empty", () => {
    const parsed = parseStoreText('\ufeff{\n"a": {}\n,}');
    expect(!parsed.ok && parsed.reason).toBe(
      "not valid JSON at line 3, column 2: expected a double-quoted key, found '}'",
    );
    const blank = parseStoreText("\ufeff \n ");
    expect(!blank.ok && blank.reason).toBe("the file is empty");
  });
});

describe("usableEntries", () => {
  it("gives a map without prototype, also for a plain object and when it must leave entries out", () => {
    const good = { sessionId: "g", updatedAt: 1 };
    const stores: Record<string, Record<string, unknown>>[] = [
      { good },
      { good, bad: { sessionId: "../x", updatedAt: 1 } },
    ];
    for (const raw of stores) {
      const { map } = usableEntries(raw);
      expect(Object.getPrototypeOf(map)).toBeNull();
      expect(Object.keys(map)).toEqual(["good"]);
      expect(map.constructor).toBeUndefined();
    }
  });
});
