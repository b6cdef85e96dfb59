import { describe, expect, it } from "vitest";
import { z } from "zod";
import { configSchema } from "./config-schema.js";
import { describeExpected, objectKeysAt, schemaAt, schemaKeyPaths } from "./config-schema-walk.js";

describe("describeExpected", () => {
  it.each([
    ["number min", z.number().min(1), "a number >= 1"],
    ["positive number", z.number().positive(), "a number > 0"],
    ["open-closed range", z.number().gt(0).max(1), "a number > 0 and <= 1"],
    ["integer range", z.number().int().min(0).max(65535), "an integer between 0 and 65535"],
    ["integer with default", z.number().int().min(0).default(3), "an integer >= 0"],
    ["plain string", z.string(), "a string"],
    ["non-empty string", z.string().min(1).optional(), "a non-empty string"],
    ["long string", z.string().min(8), "a string of at least 8 characters"],
    ["bounded string", z.string().min(2).max(4), "a string of 2 to 4 characters"],
    ["regex with message", z.string().regex(/^x$/, "an x"), "an x"],
    ["regex without message", z.string().regex(/^x$/), "a string matching /^x$/"],
    ["url", z.url(), 'a URL like "https://example.com/v1"'],
    ["boolean", z.boolean().default(true), "true or false"],
    ["enum", z.enum(["a", "b"]), 'one of "a", "b"'],
    ["literal", z.literal("x"), '"x"'],
    ["list of strings", z.array(z.string()), "a list of strings"],
    ["list of patterned strings", z.array(z.string().regex(/^x$/, "an x")), "a list (each an x)"],
    ["object", z.strictObject({ a: z.number() }), "an object"],
    ["record", z.record(z.string(), z.number()), "an object"],
    ["union", z.union([z.number().int(), z.string().regex(/^\d+$/, "digits")]), "an integer or digits"],
    ["unknown", z.unknown().optional(), "any value"],
  ])("%s", (_name, schema, expected) => {
    expect(describeExpected(schema)).toBe(expected);
  });
});

describe("schemaAt / objectKeysAt", () => {
  it("walks objects, records and arrays through defaults and optionals", () => {
    expect(describeExpected(schemaAt(configSchema, ["inbound", "reply", "session", "idleMinutes"])!)).toBe(
      "a number >= 1",
    );
    expect(describeExpected(schemaAt(configSchema, ["plugins", "entries", "any-name", "enabled"])!)).toBe(
      "true or false",
    );
    expect(
      describeExpected(schemaAt(configSchema, ["inbound", "reply", "session", "resetTriggers", 0])!),
    ).toBe("a non-empty string");
  });

  it("returns undefined where the schema has no such place", () => {
    expect(schemaAt(configSchema, ["gateway", "prot"])).toBeUndefined();
    expect(schemaAt(configSchema, ["gateway", "port", "x"])).toBeUndefined();
    expect(schemaAt(configSchema, ["inbound", "allowFrom", "x"])).toBeUndefined();
  });

  it("lists the keys of an object", () => {
    expect(objectKeysAt(configSchema, ["gateway"])).toEqual([
      "port",
      "bind",
      "parkedReplyWarnSeconds",
      "timeZone",
      "openai",
    ]);
    expect(objectKeysAt(configSchema, ["gateway", "port"])).toBeUndefined();
  });
});

describe("schemaKeyPaths", () => {
  it("lists parents, leaves, record entries and arrays of objects", () => {
    const schema = z.strictObject({
      a: z.strictObject({ b: z.number().default(1) }).default({ b: 1 }),
      list: z.array(z.string()).default([]),
      hooks: z.record(z.string(), z.strictObject({ token: z.string().optional() })).default({}),
      rows: z.array(z.strictObject({ id: z.number() })).optional(),
    });
    expect(schemaKeyPaths(schema)).toEqual([
      { path: ["a"], leaf: false },
      { path: ["a", "b"], leaf: true },
      { path: ["list"], leaf: true },
      { path: ["hooks"], leaf: false },
      { path: ["hooks", "*", "token"], leaf: true },
      { path: ["rows"], leaf: false },
      { path: ["rows", "[]", "id"], leaf: true },
    ]);
  });
});
