import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import JSON5 from "json5";
import { describe, expect, it } from "vitest";
import { builtinConfigSections } from "../main.js";
import { parseConfigText } from "./config.js";
import { ANY_INDEX, ANY_KEY, schemaKeyPaths } from "./config-schema-walk.js";
import { composeConfigSchema } from "./config-sections.js";
import { type Json5Path, locateJson5 } from "./json5-locate.js";

/**
 * Keeps clawdis.example.json and docs/configuration.md complete: a key added to the schema, the core's or a
 * built-in plugin's section, without being shown in the example (with a comment) and in the docs table fails
 * here; so does a section key whose text there is not the plugin's own `describe`.
 */

const examplePath = fileURLToPath(new URL("../../clawdis.example.json", import.meta.url));
const docsPath = fileURLToPath(new URL("../../docs/configuration.md", import.meta.url));
const exampleText = readFileSync(examplePath, "utf8");
const docsText = readFileSync(docsPath, "utf8");

/**
 * Keys that are only an editor hint: shown commented out in the example (a `$schema` pointing at a file the
 * user may not have would make editors complain), but still documented.
 */
/**
 * Keys shown in a comment only: editor-only keys, and paths whose value would pin a file outside the state
 * directory (copying the example whole must keep the store and workspace under CLAWDIS_STATE_DIR).
 */
const COMMENTED_OUT_KEYS = new Set([
  "$schema",
  "inbound.reply.session.store",
  // A daily reset and a disk limit change what happens to a copy's sessions: shown, not set.
  "inbound.reply.session.dailyResetAt",
  "inbound.reply.session.maintenance.maxDiskMb",
  "inbound.reply.agent.workspace",
  // A token here would make a copy of the example connect to Telegram: shown, not set.
  "telegram.botToken",
  "telegram.webhookUrl",
  "telegram.webhookSecret",
  "whatsapp.socketUrl",
  // Its default is the machine's time zone: a copy of the example must not pin one.
  "gateway.timeZone",
]);

const sections = await builtinConfigSections({});
const options = { sections, unclaimed: "error" as const };
const schemaPaths = schemaKeyPaths(composeConfigSchema(sections));

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
    const config = parseConfigText(exampleText, "clawdis.example.json", options);
    expect(config.gateway.port).toBe(18789);
  });

  it("shows the seed keys of SPEC section 3 verbatim", () => {
    const { session } = parseConfigText(exampleText, "clawdis.example.json", options).inbound.reply;
    expect(session.scope).toBe("per-sender");
    expect(session.idleMinutes).toBe(60);
    expect(session.resetTriggers).toEqual(["/new"]);
    // The seed's store line, verbatim, in a comment: its value is the default under ~/.clawdis anyway.
    expect(session.store).toBeUndefined();
    expect(exampleText).toContain('// "store": "~/.clawdis/sessions/sessions.json",');
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
      // The last segment of the path, commented out (its place in the file shows its parents).
      const leaf = key.split(".").at(-1)!;
      expect(exampleText).toMatch(new RegExp(`^\\s*//\\s*"${leaf.replace("$", "\\$")}"\\s*:`, "m"));
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

/** `<name>.session` -> a pattern for the walker's path below the section (`*` for any record key). */
function describedPath(sectionKey: string, described: string): string[] {
  return [
    sectionKey,
    ...described.split(".").map((segment) => (/^<[a-z]+>$/.test(segment) ? ANY_KEY : segment)),
  ];
}

/** The comment on a line and the `//` lines just above it, as one line of text. */
function commentAt(lines: readonly string[], line: number): string {
  const parts: string[] = [];
  const own = lines[line - 1] ?? "";
  const trailing = own.indexOf("//");
  if (trailing >= 0) parts.push(own.slice(trailing + 2));
  for (let at = line - 2; at >= 0 && /^\s*\/\//.test(lines[at] ?? ""); at--) {
    parts.unshift((lines[at] ?? "").replace(/^\s*\/\//, ""));
  }
  return parts.join(" ").replace(/\s+/g, " ").trim();
}

/** The comment lines just above the commented-out key on `line` (1-based), up to the previous commented key. */
function commentAboveCommentedKey(lines: readonly string[], line: number): string {
  const parts: string[] = [];
  for (let at = line - 2; at >= 0; at--) {
    const text = lines[at] ?? "";
    if (!/^\s*\/\//.test(text) || /^\s*\/\/\s*"[^"]+"\s*:/.test(text)) break;
    parts.unshift(text.replace(/^\s*\/\//, ""));
  }
  return parts.join(" ").replace(/\s+/g, " ").trim();
}

describe("the plugins' own descriptions (describe)", () => {
  it("cover every key of each section, and name only keys the section has", () => {
    for (const { section } of sections) {
      const own = schemaPaths.filter(({ path }) => path[0] === section.key && path.length > 1);
      const described = Object.keys(section.describe).map((key) => describedPath(section.key, key).join("."));
      const leaves = own.filter(({ leaf }) => leaf).map(({ path }) => path.join("."));
      expect(leaves.filter((path) => !described.includes(path))).toEqual([]);
      // Every path and its prefixes: a record's entries (`webhooks.<name>`) are described too.
      const all = own.flatMap(({ path }) => path.slice(1).map((_, i) => path.slice(0, i + 2).join(".")));
      expect(described.filter((path) => !all.includes(path))).toEqual([]);
    }
  });

  it("are the comments of the section's keys in clawdis.example.json", () => {
    const lines = exampleText.split("\n");
    const located = locateJson5(exampleText);
    const wrong: string[] = [];
    for (const { section } of sections) {
      for (const [key, text] of Object.entries(section.describe)) {
        const pattern = describedPath(section.key, key);
        const at = located.paths().find((path) => matches(pattern, path));
        // A key shown commented out: the comment above its commented line.
        const commented = COMMENTED_OUT_KEYS.has(pattern.join("."))
          ? lines.findIndex((line) => new RegExp(`^\\s*//\\s*"${pattern.at(-1)}"\\s*:`).test(line)) + 1
          : 0;
        const comment =
          commented > 0
            ? commentAboveCommentedKey(lines, commented)
            : at === undefined
              ? ""
              : commentAt(lines, located.at(at)?.line ?? 0);
        if (!comment.toLowerCase().includes(text.toLowerCase()))
          wrong.push(`${section.key}.${key}: ${JSON.stringify(comment)}`);
      }
    }
    expect(wrong).toEqual([]);
  });

  it("are the meanings of the section's rows in docs/configuration.md", () => {
    const rows = docsText.split("\n").filter((line) => line.startsWith("| `"));
    const wrong: string[] = [];
    for (const { section } of sections) {
      for (const [key, text] of Object.entries(section.describe)) {
        const row = rows.find((line) => line.startsWith(`| \`${section.key}.${key}\``));
        if (!row?.includes(` ${text} `)) wrong.push(`${section.key}.${key}: ${row ?? "no row"}`);
      }
    }
    expect(wrong).toEqual([]);
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
