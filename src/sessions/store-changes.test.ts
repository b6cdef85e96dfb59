import { describe, expect, it } from "vitest";
import { applyUpdate, copyJsonData, noChanges } from "./store-changes.js";

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
