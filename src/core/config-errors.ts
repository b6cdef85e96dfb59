import { basename } from "node:path";
import type { z } from "zod";
import { formatPath } from "./config-path.js";
import {
  ANY_INDEX,
  ANY_KEY,
  describeExpected,
  objectKeysAt,
  schemaAt,
  schemaKeyPaths,
} from "./config-schema-walk.js";
import { type Json5Path, locateJson5 } from "./json5-locate.js";

export { formatPath } from "./config-path.js";

/**
 * Turns JSON5 syntax errors and zod issues into messages a person can act on:
 *   `inbound.reply.session.idleMinutes: expected a number >= 1, got "soon" (clawdis.json line 7)`
 * One line per problem, sorted by line in the file; each names the key path, what was expected, what was found,
 * and where. Pure: text in, text out.
 */

const MAX_VALUE_CHARS = 60;

/** A value as it would be written in the file (JSON), shortened when long; `undefined` is "nothing". */
export function formatValue(value: unknown): string {
  if (value === undefined) return "nothing";
  if (typeof value === "number" && !Number.isFinite(value)) return String(value);
  const json = JSON.stringify(value) ?? String(value);
  return json.length > MAX_VALUE_CHARS ? `${json.slice(0, MAX_VALUE_CHARS - 1)}…` : json;
}

/** Optimal string alignment distance (Levenshtein plus adjacent transpositions: "prot" -> "port" is 1). */
export function editDistance(a: string, b: string): number {
  const rows = a.length + 1;
  const cols = b.length + 1;
  const d: number[][] = Array.from({ length: rows }, (_, i) =>
    Array.from({ length: cols }, (_, j) => (i === 0 ? j : j === 0 ? i : 0)),
  );
  for (let i = 1; i < rows; i++) {
    const row = d[i] as number[];
    const prev = d[i - 1] as number[];
    for (let j = 1; j < cols; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      let best = Math.min(
        (prev[j] as number) + 1,
        (row[j - 1] as number) + 1,
        (prev[j - 1] as number) + cost,
      );
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) {
        best = Math.min(best, ((d[i - 2] as number[])[j - 2] as number) + 1);
      }
      row[j] = best;
    }
  }
  return (d[a.length] as number[])[b.length] as number;
}

/** Lowercase without `_`, `-` and spaces: "Idle_Minutes" and "idleMinutes" normalise alike. */
function normalise(word: string): string {
  return word.toLowerCase().replace(/[\s_-]/g, "");
}

/** The candidate closest to `word`, when it is close enough to be a likely typo; else undefined. */
export function closestMatch(word: string, candidates: readonly string[]): string | undefined {
  const target = normalise(word);
  const limit = Math.max(1, Math.floor(target.length / 3));
  let best: { candidate: string; distance: number } | undefined;
  for (const candidate of candidates) {
    const distance = editDistance(target, normalise(candidate));
    if (distance <= limit && (best === undefined || distance < best.distance)) best = { candidate, distance };
  }
  return best?.candidate;
}

/** The value at `path` in the parsed input, or undefined when there is none. */
function valueAt(input: unknown, path: Json5Path): unknown {
  let current = input;
  for (const segment of path) {
    if (current === null || typeof current !== "object") return undefined;
    if (!Object.hasOwn(current, segment)) return undefined;
    current = (current as Record<string | number, unknown>)[segment];
  }
  return current;
}

/** A hint for an unknown key: a close sibling, else the same key elsewhere in the schema, else the known keys. */
function unknownKeyHint(schema: z.core.$ZodType, parent: Json5Path, key: string): string {
  const siblings = objectKeysAt(schema, parent) ?? [];
  const close = closestMatch(key, siblings);
  if (close !== undefined) return ` — did you mean "${close}"?`;
  // The same key (or one letter off) at another level: a key written in the wrong object.
  const wanted = normalise(key);
  const readable = (path: string[]): string =>
    path
      .map((segment) => (segment === ANY_KEY ? "<name>" : segment === ANY_INDEX ? "[]" : segment))
      .join(".")
      .replace(/\.\[\]/g, "[]");
  const elsewhere = schemaKeyPaths(schema).map((entry) => entry.path);
  const same = elsewhere.filter((path) => normalise(path[path.length - 1] as string) === wanted);
  if (same.length > 0) return ` — it belongs at ${same.map(readable).join(" or ")}`;
  const near = elsewhere.filter(
    (path) => editDistance(wanted, normalise(path[path.length - 1] as string)) <= 1,
  );
  if (near.length > 0 && wanted.length > 3) return ` — did you mean ${near.map(readable).join(" or ")}?`;
  if (siblings.length > 0) return ` — known keys here: ${siblings.join(", ")}`;
  return "";
}

interface ProblemLine {
  line: number | undefined;
  text: string;
}

/**
 * Formats every zod issue into lines like `a.b: expected …, got … (file line N)`, and every key written twice in
 * one object (`a.b: duplicate key (file line 9; also line 3) …`, located at its last occurrence, the one JSON5
 * keeps), sorted by line. Pass no issues to report only the duplicates.
 */
export function formatConfigIssues(
  issues: readonly z.core.$ZodIssue[],
  input: unknown,
  text: string,
  fileLabel: string,
  schema: z.core.$ZodType,
): string[] {
  const locator = locateJson5(text);
  const file = basename(fileLabel);
  const where = (path: Json5Path): { line: number | undefined; suffix: string } => {
    const line = locator.nearest(path)?.location.line;
    return { line, suffix: line === undefined ? ` (${file})` : ` (${file} line ${line})` };
  };
  const problems: ProblemLine[] = [];

  for (const duplicate of locator.duplicates()) {
    const lines = duplicate.locations.map((location) => location.line);
    const last = lines[lines.length - 1] as number;
    const others = lines.slice(0, -1);
    const also = `also line${others.length > 1 ? "s" : ""} ${others.join(", ")}`;
    problems.push({
      line: last,
      text: `${formatPath(duplicate.path)}: duplicate key (${file} line ${last}; ${also}) — only the last one would count: keep one`,
    });
  }

  for (const issue of issues) {
    const path = issue.path as Json5Path;
    if (issue.code === "unrecognized_keys") {
      for (const key of issue.keys) {
        const keyPath = [...path, key];
        const { line, suffix } = where(keyPath);
        const hint = unknownKeyHint(schema, path, key);
        problems.push({ line, text: `${formatPath(keyPath)}: unknown key${suffix}${hint}` });
      }
      continue;
    }
    const { line, suffix } = where(path);
    if (issue.code === "custom") {
      // A rule of the loader's own (e.g. a plugin's settings outside its section): the message says it all.
      problems.push({ line, text: `${formatPath(path)}: ${issue.message}${suffix}` });
      continue;
    }
    if (issue.code === "invalid_key") {
      const rule = issue.issues[0]?.message ?? "a valid name";
      const name = path[path.length - 1];
      problems.push({
        line,
        text: `${formatPath(path)}: bad name ${formatValue(name)}, expected ${rule}${suffix}`,
      });
      continue;
    }
    const node = schemaAt(schema, path);
    const described = node ? describeExpected(node) : undefined;
    const expected =
      described !== undefined && described !== "a valid value" ? described : issue.message.toLowerCase();
    const got = valueAt(input, path);
    const found = got === undefined ? "the key is missing" : `got ${formatValue(got)}`;
    let hint = "";
    if (issue.code === "invalid_value" && typeof got === "string") {
      const options = issue.values.filter((value): value is string => typeof value === "string");
      const close = closestMatch(got, options);
      if (close !== undefined) hint = ` — did you mean "${close}"?`;
    }
    problems.push({ line, text: `${formatPath(path)}: expected ${expected}, ${found}${suffix}${hint}` });
  }

  // Stable sort: file order first, problems without a line last, zod's order among equals.
  return problems
    .map((problem, index) => ({ problem, index }))
    .sort((a, b) => {
      const la = a.problem.line ?? Number.POSITIVE_INFINITY;
      const lb = b.problem.line ?? Number.POSITIVE_INFINITY;
      return la === lb ? a.index - b.index : la - lb;
    })
    .map(({ problem }) => problem.text);
}

/** `<label>: JSON5 syntax error at line L, column C: <reason>`, then the offending line with a caret under C. */
export function formatJson5SyntaxError(error: unknown, text: string, fileLabel: string): string {
  const raw = error instanceof Error ? error.message : String(error);
  const reason = raw.replace(/^JSON5:\s*/, "").replace(/\s+at \d+:\d+\s*$/, "");
  const props = (error ?? {}) as { lineNumber?: unknown; columnNumber?: unknown };
  const line = typeof props.lineNumber === "number" ? props.lineNumber : undefined;
  const column = typeof props.columnNumber === "number" ? props.columnNumber : undefined;
  if (line === undefined || column === undefined) return `${fileLabel}: JSON5 syntax error: ${reason}`;
  const head = `${fileLabel}: JSON5 syntax error at line ${line}, column ${column}: ${reason}`;
  const source = text.split(/\r\n|\n/)[line - 1];
  if (source === undefined) return head;
  // Show at most ~100 chars of the line, keeping the column in view.
  const start = Math.max(0, column - 70);
  const shown = (start > 0 ? "…" : "") + source.slice(start, start + 100).replace(/\t/g, " ");
  const caretAt = column - 1 - start + (start > 0 ? 1 : 0);
  const gutter = `${line} | `;
  return `${head}\n  ${gutter}${shown}\n  ${" ".repeat(gutter.length)}${" ".repeat(Math.max(0, caretAt))}^`;
}
