import type { z } from "zod";
import type { Json5Path } from "./json5-locate.js";

/**
 * Reading the config schema as data: the sub-schema at a key path, every key path it allows, and a plain-English
 * description of what a value must be ("a number >= 1"). Used by the error formatter and by the tests that keep
 * clawdis.example.json and docs/configuration.md complete.
 *
 * Only the zod shapes clawdis uses are understood; anything else is described as "a valid value".
 */

type Schema = z.core.$ZodType;

/** Path segment standing for any key of a record (e.g. `webhooks.*.token`). */
export const ANY_KEY = "*";
/** Path segment standing for any element of an array. */
export const ANY_INDEX = "[]";

export interface SchemaKeyPath {
  path: string[];
  /** True when the value at this path is not an object or record (a scalar, a list, or free-form). */
  leaf: boolean;
}

function defOf(schema: Schema): z.core.$ZodTypes["_zod"]["def"] {
  return (schema as z.core.$ZodTypes)._zod.def;
}

/** Strips wrappers that do not change the shape: default, optional, nullable, readonly, catch, pipe (input side). */
export function unwrapSchema(schema: Schema): Schema {
  let current = schema;
  for (;;) {
    const def = defOf(current);
    switch (def.type) {
      case "default":
      case "prefault":
      case "optional":
      case "nullable":
      case "nonoptional":
      case "readonly":
      case "catch":
        current = def.innerType;
        break;
      case "pipe":
        current = def.in;
        break;
      default:
        return current;
    }
  }
}

/** The sub-schema a value at `path` is checked against, or undefined when the schema has no such place. */
export function schemaAt(root: Schema, path: Json5Path): Schema | undefined {
  let current: Schema = root;
  for (const segment of path) {
    const def = defOf(unwrapSchema(current));
    if (def.type === "object" && typeof segment === "string") {
      const next = def.shape[segment];
      if (next === undefined) return undefined;
      current = next;
    } else if (def.type === "record" && typeof segment === "string") {
      current = def.valueType;
    } else if (def.type === "array" && typeof segment === "number") {
      current = def.element;
    } else {
      return undefined;
    }
  }
  return current;
}

/** The keys an object at `path` may have, or undefined when no object is expected there. */
export function objectKeysAt(root: Schema, path: Json5Path): string[] | undefined {
  const schema = schemaAt(root, path);
  if (!schema) return undefined;
  const def = defOf(unwrapSchema(schema));
  return def.type === "object" ? Object.keys(def.shape) : undefined;
}

/** Every key path the schema allows, parents before children; records contribute `*`, arrays `[]`. */
export function schemaKeyPaths(root: Schema): SchemaKeyPath[] {
  const out: SchemaKeyPath[] = [];
  const visit = (schema: Schema, path: string[]): void => {
    const def = defOf(unwrapSchema(schema));
    if (def.type === "object") {
      for (const [key, child] of Object.entries(def.shape)) {
        const childPath = [...path, key];
        out.push({ path: childPath, leaf: !isContainer(child) });
        visit(child, childPath);
      }
    } else if (def.type === "record") {
      visit(def.valueType, [...path, ANY_KEY]);
    } else if (def.type === "array" && isContainer(def.element)) {
      visit(def.element, [...path, ANY_INDEX]);
    }
  };
  visit(root, []);
  return out;
}

/** Objects and records hold keys; so does an array whose elements do. */
function isContainer(schema: Schema): boolean {
  const def = defOf(unwrapSchema(schema));
  if (def.type === "object" || def.type === "record") return true;
  return def.type === "array" && isContainer(def.element);
}

/** Reads the custom message given to a check (`.regex(re, "a numeric user id")`), if any. */
function customCheckMessage(check: z.core.$ZodCheckDef): string | undefined {
  if (typeof check.error !== "function") return undefined;
  // A string passed as the error of a check becomes an error map that ignores its argument; a real error map
  // gets a plausible issue. Either way only a string (or { message }) result is used.
  const errorMap = check.error as (issue: unknown) => unknown;
  const result = errorMap({ code: "invalid_format", format: "regex", input: "", path: [] });
  if (typeof result === "string") return result;
  if (result && typeof result === "object" && "message" in result && typeof result.message === "string") {
    return result.message;
  }
  return undefined;
}

function checksOf(schema: Schema): z.core.$ZodCheckDef[] {
  const def = (schema as z.core.$ZodTypes)._zod.def as { checks?: z.core.$ZodCheck[] } & z.core.$ZodCheckDef;
  const checks = (def.checks ?? []).map((check) => check._zod.def);
  // A string format schema such as z.url() is itself its format check.
  if (typeof def.check === "string") checks.unshift(def);
  return checks;
}

function numberBounds(checks: z.core.$ZodCheckDef[]): string {
  let lower: { value: number; inclusive: boolean } | undefined;
  let upper: { value: number; inclusive: boolean } | undefined;
  for (const check of checks) {
    if (check.check === "greater_than") {
      const c = check as z.core.$ZodCheckGreaterThanDef;
      lower = { value: Number(c.value), inclusive: c.inclusive };
    } else if (check.check === "less_than") {
      const c = check as z.core.$ZodCheckLessThanDef;
      upper = { value: Number(c.value), inclusive: c.inclusive };
    }
  }
  if (lower?.inclusive && upper?.inclusive) return ` between ${lower.value} and ${upper.value}`;
  const parts: string[] = [];
  if (lower) parts.push(`${lower.inclusive ? ">=" : ">"} ${lower.value}`);
  if (upper) parts.push(`${upper.inclusive ? "<=" : "<"} ${upper.value}`);
  return parts.length > 0 ? ` ${parts.join(" and ")}` : "";
}

function describeString(schema: Schema): string {
  const checks = checksOf(schema);
  for (const check of checks) {
    if (check.check !== "string_format") continue;
    const format = (check as z.core.$ZodCheckStringFormatDef).format;
    const custom = customCheckMessage(check);
    if (custom) return custom;
    if (format === "url") return 'a URL like "https://example.com/v1"';
    if (format === "regex")
      return `a string matching ${String((check as z.core.$ZodCheckStringFormatDef).pattern)}`;
    return `a string in ${format} format`;
  }
  let min = 0;
  let max: number | undefined;
  for (const check of checks) {
    if (check.check === "min_length") min = (check as z.core.$ZodCheckMinLengthDef).minimum;
    if (check.check === "max_length") max = (check as z.core.$ZodCheckMaxLengthDef).maximum;
  }
  if (max !== undefined) return `a string of ${min} to ${max} characters`;
  if (min === 1) return "a non-empty string";
  if (min > 1) return `a string of at least ${min} characters`;
  return "a string";
}

function describeNumber(schema: Schema): string {
  const checks = checksOf(schema);
  const integer = checks.some(
    (check) =>
      check.check === "number_format" && /int/.test((check as z.core.$ZodCheckNumberFormatDef).format),
  );
  return `${integer ? "an integer" : "a number"}${numberBounds(checks)}`;
}

const PLURALS: Record<string, string> = {
  "a string": "strings",
  "a non-empty string": "non-empty strings",
  "a number": "numbers",
  "an integer": "integers",
  "true or false": "true/false values",
};

/** What a value checked by `schema` must be, in words: "a number >= 1", 'one of "per-sender", "global"'. */
export function describeExpected(schema: Schema): string {
  const inner = unwrapSchema(schema);
  const def = defOf(inner);
  switch (def.type) {
    case "string":
      return describeString(inner);
    case "number":
      return describeNumber(inner);
    case "boolean":
      return "true or false";
    case "null":
      return "null";
    case "enum":
      return `one of ${Object.values(def.entries)
        .map((value) => JSON.stringify(value))
        .join(", ")}`;
    case "literal":
      return def.values.length === 1
        ? JSON.stringify(def.values[0])
        : `one of ${def.values.map((v) => JSON.stringify(v)).join(", ")}`;
    case "array": {
      const element = describeExpected(def.element);
      const plural = PLURALS[element];
      return plural ? `a list of ${plural}` : `a list (each ${element})`;
    }
    case "object":
    case "record":
      return "an object";
    case "union":
      return def.options.map((option) => describeExpected(option)).join(" or ");
    case "unknown":
    case "any":
      return "any value";
    default:
      return "a valid value";
  }
}
