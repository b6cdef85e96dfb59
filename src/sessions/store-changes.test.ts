import { describe, expect, it } from "vitest";
import { applyUpdate, copyJsonData, jsonDataOf, noChanges } from "./store-changes.js";

describe("copyJsonData", () => {
  it("gives what a JSON round trip gives for JSON data, sharing nothing", () => {
    const text =
      '{"sessionId":"s1","updatedAt":1,"origin":{"channel":"telegram","chatId":"42"},"list":[1,"a",null,true,[{"x":-0.5}]],"empty":{},"none":null}';
    const parsed = JSON.parse(text) as Record<string, unknown>;
    const copy = copyJsonData(parsed);
    expect(copy).toStrictEqual(JSON.parse(text));
    expect(JSON.stringify(copy)).toBe(text);
    expect(copy.origin).not.toBe(parsed.origin);
    expect(copy.list).not.toBe(parsed.list);
    (copy.origin as Record<string, unknown>).chatId = "changed";
    expect((parsed.origin as Record<string, unknown>).chatId).toBe("42");
  });

  it("keeps an own __proto__ key as a key (as JSON.parse made it), never as the prototype", () => {
    const parsed = JSON.parse('{"a":{"__proto__":{"polluted":true},"b":1}}') as {
      a: Record<string, unknown>;
    };
    const copy = copyJsonData(parsed);
    expect(Object.getPrototypeOf(copy.a)).toBe(Object.prototype);
    expect(Object.keys(copy.a)).toEqual(["__proto__", "b"]);
    expect(JSON.stringify(copy)).toBe(JSON.stringify(parsed));
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });
});

describe("applyUpdate", () => {
  it("returns a copy of the stored entry, shared neither with the batch's changes nor with the next update", () => {
    const changes = noChanges();
    const origin = { channel: "telegram", chatId: "1", chatType: "direct" as const };
    const fn = () => ({ sessionId: "s1", updatedAt: 1, origin, model: undefined });
    const returned = applyUpdate(undefined, changes, "k", fn, 5, "/x/sessions.json");
    // What a re-read of the file gives: no undefined key, nothing shared with what `fn` returned.
    expect(returned).toStrictEqual({ sessionId: "s1", updatedAt: 1, origin: { ...origin } });
    expect(returned?.origin).not.toBe(origin);
    const stored = changes.entries.get("k");
    expect(returned).toStrictEqual(stored);
    expect(returned).not.toBe(stored);
    expect(returned?.origin).not.toBe(stored?.origin);
  });
});

describe("jsonDataOf", () => {
  const roundTrip = (value: object) => JSON.parse(JSON.stringify(value)) as unknown;
  class Point {
    constructor(
      readonly x: number,
      readonly y: number,
    ) {}
  }
  const sparse: unknown[] = [1];
  sparse[3] = 2;
  let deep: Record<string, unknown> = { leaf: [1, undefined, () => 1] };
  for (let i = 0; i < 40; i++) deep = { next: deep, i };
  const nullProto = Object.assign(Object.create(null) as Record<string, unknown>, { a: 1, b: undefined });
  const withGetter = Object.defineProperty({ shown: 1 }, "got", { get: () => "computed", enumerable: true });
  const hidden = Object.defineProperty({ shown: 1 }, "hidden", { value: 2, enumerable: false });
  const cases: [string, object][] = [
    [
      "plain data",
      { sessionId: "s", updatedAt: 1, origin: { channel: "telegram" }, list: [1, "a", null, true] },
    ],
    [
      "undefined, functions and symbols left out of objects",
      { a: undefined, f: () => 1, s: Symbol("x"), b: 2 },
    ],
    ["undefined, functions and symbols as null in arrays", { list: [undefined, () => 1, Symbol("x"), 3] }],
    [
      "numbers that are not finite, and -0",
      { nan: Number.NaN, inf: Number.POSITIVE_INFINITY, neg: -0, n: 1.5 },
    ],
    ["a Date (toJSON)", { at: new Date(1_700_000_000_000) }],
    ["toJSON of a plain object", { o: { toJSON: () => ({ replaced: true }) } }],
    ["toJSON of an array", { list: Object.assign([1, 2], { toJSON: () => "list" }) }],
    ["boxed primitives", { n: Object(5), s: Object("x"), b: Object(false) }],
    ["a class instance and a Map", { p: new Point(1, 2), m: new Map([["k", 1]]) }],
    ["a sparse array", { sparse }],
    ["nesting deeper than the copy goes by itself", deep],
    ["a null-prototype object", { o: nullProto }],
    ["a getter, a key that is not enumerable, a symbol key", { g: withGetter, h: hidden, [Symbol("k")]: 1 }],
    ["an own __proto__ key", JSON.parse('{"a":{"__proto__":{"polluted":true},"b":1}}') as object],
  ];
  it.each(cases)("gives what a JSON round trip gives: %s", (_name, value) => {
    const copy = jsonDataOf(value);
    expect(copy).toStrictEqual(roundTrip(value));
    expect(JSON.stringify(copy)).toBe(JSON.stringify(value));
  });

  it("makes -0 a 0, as the text in between does", () => {
    expect(Object.is((jsonDataOf({ z: -0 }) as { z: number }).z, 0)).toBe(true);
    expect(Object.is((jsonDataOf([-0]) as number[])[0], 0)).toBe(true);
  });

  it("shares nothing with the value copied", () => {
    const value = { origin: { chatId: "42" }, list: [{ x: 1 }] };
    const copy = jsonDataOf(value) as typeof value;
    expect(copy.origin).not.toBe(value.origin);
    expect(copy.list[0]).not.toBe(value.list[0]);
  });

  it("refuses what JSON refuses, with JSON's error: a cycle, a bigint", () => {
    const cycle: Record<string, unknown> = { a: 1 };
    cycle.self = { back: cycle };
    expect(() => jsonDataOf(cycle)).toThrow(TypeError);
    expect(() => jsonDataOf(cycle)).toThrow(/circular/);
    expect(() => jsonDataOf({ big: 10n })).toThrow(TypeError);
  });

  it("keeps an own __proto__ key as a key, never as the prototype", () => {
    const copy = jsonDataOf(JSON.parse('{"__proto__":{"polluted":true},"b":1}') as object);
    expect(Object.getPrototypeOf(copy)).toBe(Object.prototype);
    expect(Object.keys(copy as object)).toEqual(["__proto__", "b"]);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });
});
