import { describe, expect, it } from "vitest";
import type { z } from "zod";
import { builtinConfigSections } from "../main.js";
import { parseConfigText } from "./config.js";
import { formatPath } from "./config-errors.js";
import {
  ANY_INDEX,
  ANY_KEY,
  objectKeysAt,
  schemaAt,
  schemaKeyPaths,
  unwrapSchema,
} from "./config-schema-walk.js";
import { composeConfigSchema } from "./config-sections.js";
import { ClawdisError } from "./errors.js";
import type { Json5Path } from "./json5-locate.js";

/**
 * A misspelled key in ANY object of the schema (the core's and every built-in plugin's section) is a config error
 * naming its full path, its line and the key it was meant to be. The objects are found by walking the composed
 * schema, so an object added later (or a section that forgot to be strict) is covered without editing this file.
 */

const sections = await builtinConfigSections({});
const options = { sections, unclaimed: "error" as const };
const schema = composeConfigSchema(sections);

type Def = { type: string; keyType?: z.core.$ZodType };

/** A record key the record at `path` accepts (its names may be restricted, like webhook names). */
function recordKey(path: Json5Path): string {
  const record = schemaAt(schema, path);
  const keyType = record
    ? (unwrapSchema(record) as unknown as { _zod: { def: Def } })._zod.def.keyType
    : undefined;
  const key = ["name", "a-name", "x1", "main"].find((candidate) =>
    keyType?.["~standard"].validate(candidate),
  );
  if (key === undefined) throw new Error(`no sample key for the record at ${formatPath(path)}`);
  return key;
}

/** Every object of the schema as a concrete path (records and lists filled with one sample entry). */
function objectPaths(): Json5Path[] {
  const found = new Map<string, Json5Path>([["", []]]);
  for (const { path } of schemaKeyPaths(schema)) {
    for (let end = 1; end <= path.length; end++) {
      const concrete: (string | number)[] = [];
      for (const segment of path.slice(0, end)) {
        if (segment === ANY_KEY) concrete.push(recordKey(concrete));
        else if (segment === ANY_INDEX) concrete.push(0);
        else concrete.push(segment);
      }
      if (objectKeysAt(schema, concrete) !== undefined) found.set(JSON.stringify(concrete), concrete);
    }
  }
  return [...found.values()];
}

/** `{ a: { b: [ { <leaf> } ] } }` for the path `a.b[0]`. */
function nest(path: Json5Path, leaf: Record<string, unknown>): unknown {
  let value: unknown = leaf;
  for (const segment of [...path].reverse())
    value = typeof segment === "number" ? [value] : { [segment]: value };
  return value;
}

/** A near miss of the object's longest key (one letter short), never one of its real keys. */
function typoOf(keys: readonly string[]): { typo: string; meant: string } {
  const meant = [...keys].sort((a, b) => b.length - a.length)[0] as string;
  const typo = keys.includes(meant.slice(0, -1)) ? `${meant}x` : meant.slice(0, -1);
  return { typo, meant };
}

const paths = objectPaths();

describe("a misspelled key is an error in every object of the composed schema", () => {
  it("finds the nested objects, the plugins' sections included", () => {
    const names = paths.map((path) => formatPath(path));
    for (const expected of ["(top level)", "inbound.reply.session.timeouts", "telegram", "webhooks.name"]) {
      expect(names).toContain(expected);
    }
    expect(names.length).toBeGreaterThanOrEqual(12);
  });

  it.each(paths.map((path) => [formatPath(path), path] as const))("%s", (_name, path) => {
    const keys = objectKeysAt(schema, path) ?? [];
    const { typo, meant } = typoOf(keys);
    const text = JSON.stringify(nest(path, { [typo]: 1 }), null, 2);
    const line = text.split("\n").findIndex((row) => row.includes(`"${typo}":`)) + 1;
    let error: unknown;
    try {
      parseConfigText(text, "/x/clawdis.json", options);
    } catch (caught) {
      error = caught;
    }
    expect(error).toBeInstanceOf(ClawdisError);
    expect((error as ClawdisError).exitCode).toBe(2);
    expect((error as ClawdisError).message.split("\n")).toContain(
      `  ${formatPath([...path, typo])}: unknown key (clawdis.json line ${line}) — did you mean "${meant}"?`,
    );
  });
});
