import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import JSON5 from "json5";
import { describe, expect, it } from "vitest";
import { configSchema, parseConfigText } from "./config.js";
import { ANY_INDEX, ANY_KEY, schemaKeyPaths } from "./config-schema-walk.js";
import { type Json5Path, locateJson5 } from "./json5-locate.js";

/**
 * Keeps clawdis.example.json and docs/configuration.md complete: a key added to the schema without being shown
 * in the example (with a comment) and in the docs table fails here.
 */

const examplePath = fileURLToPath(new URL("../../clawdis.example.json", import.meta.url));
const docsPath = fileURLToPath(new URL("../../docs/configuration.md", import.meta.url));
const exampleText = readFileSync(examplePath, "utf8");
const docsText = readFileSync(docsPath, "utf8");

/**
 * Keys that are only an editor hint: shown commented out in the example (a `$schema` pointing at a file the
 * user may not have would make editors complain), but still documented.
 */
const COMMENTED_OUT_KEYS = new Set(["$schema"]);

const schemaPaths = schemaKeyPaths(configSchema);

function matches(pattern: readonly string[], path: Json5Path): boolean {
  if (pattern.length !== path.length) return false;
  return pattern.every((segment, i) => {
    const actual = path[i];
    if (segment === ANY_KEY) return typeof actual === "string";
    if (segment === ANY_INDEX) return typeof actual === "number";
    return segment === actual;
  });
}

/** Every key path and array index path of a parsed JSON value. */
function valuePaths(value: unknown, prefix: Json5Path = []): Json5Path[] {
  if (Array.isArray(value)) {
    return value.flatMap((item, i) => [[...prefix, i], ...valuePaths(item, [...prefix, i])]);
  }
  if (value !== null && typeof value === "object") {
    return Object.entries(value).flatMap(([key, item]) => [
      [...prefix, key],
      ...valuePaths(item, [...prefix, key]),
    ]);
  }
  return [];
}

describe("clawdis.example.json", () => {
  it("parses and validates", () => {
    const config = parseConfigText(exampleText, "clawdis.example.json");
    expect(config.gateway.port).toBe(18789);
  });

  it("shows the seed keys of SPEC section 3 verbatim", () => {
    const { session } = parseConfigText(exampleText, "clawdis.example.json").inbound.reply;
    expect(session.scope).toBe("per-sender");
    expect(session.idleMinutes).toBe(60);
    expect(session.resetTriggers).toEqual(["/new"]);
    expect(session.store).toBe("~/.clawdis/sessions/sessions.json");
    expect(session.mainKey).toBe("main");
  });

  it("shows every key of the schema (records and lists with at least one entry)", () => {
    const shown = locateJson5(exampleText).paths();
    const missing = schemaPaths
      .filter(({ path }) => !COMMENTED_OUT_KEYS.has(path.join(".")))
      .filter(({ path }) => !shown.some((located) => matches(path, located)))
      .map(({ path }) => path.join("."));
    expect(missing).toEqual([]);
  });

  it("shows editor-only keys in a comment", () => {
    for (const key of COMMENTED_OUT_KEYS) {
      expect(exampleText).toMatch(new RegExp(`^\\s*//\\s*"${key.replace("$", "\\$")}"\\s*:`, "m"));
    }
  });

  it("has a comment on or just above every key of the schema", () => {
    const lines = exampleText.split("\n");
    const locator = locateJson5(exampleText);
    const uncommented: string[] = [];
    for (const path of locator.paths()) {
      const last = path[path.length - 1];
      if (typeof last !== "string") continue;
      const pattern = schemaPaths.find((entry) => matches(entry.path, path));
      // Record entry names ("build-alerts") are the user's own; their parent key carries the comment.
      if (!pattern || pattern.path[pattern.path.length - 1] === ANY_KEY) continue;
      const line = locator.at(path)!.line;
      const own = lines[line - 1] ?? "";
      const above = lines[line - 2] ?? "";
      if (!own.includes("//") && !/^\s*\/\//.test(above)) uncommented.push(path.join("."));
    }
    expect(uncommented).toEqual([]);
  });

  it("is located exactly as JSON5 reads it (the locator agrees with the parser on a real file)", () => {
    const expected = valuePaths(JSON5.parse(exampleText)).map((path) => JSON.stringify(path));
    const located = locateJson5(exampleText)
      .paths()
      .map((path) => JSON.stringify(path));
    expect(new Set(located)).toEqual(new Set(expected));
  });
});

describe("docs/configuration.md", () => {
  it("has a table row for every leaf key of the schema", () => {
    const missing = schemaPaths
      .filter(({ path, leaf }) => leaf && !path.includes(ANY_INDEX))
      .map(({ path }) => path)
      .filter((path) => {
        const pattern = path
          .map((segment) => (segment === ANY_KEY ? "<[a-z]+>" : segment.replace(/\$/g, "\\$")))
          .join("\\.");
        return !new RegExp(`^\\|\\s*\`${pattern}\``, "m").test(docsText);
      })
      .map((path) => path.join("."));
    expect(missing).toEqual([]);
  });

  it("names the environment overrides", () => {
    for (const name of ["CLAWDIS_STATE_DIR", "CLAWDIS_CONFIG_PATH", "OPENAI_BASE_URL", "OPENAI_API_KEY"]) {
      expect(docsText).toContain(name);
    }
  });
});
