import { readdirSync, readFileSync } from "node:fs";
import { dirname, join, relative, resolve, sep } from "node:path";
import { fileURLToPath } from "node:url";
import ts from "typescript";
import { describe, expect, it } from "vitest";

/**
 * The shape rule of ARCHITECTURE.md on file size: no source file (tests left out) over MAX_LINES lines unless its
 * opening comment (the comments before its first line of code) says why, in words that name the limit
 * ("400 lines"). The rule is read from the files themselves, so it holds for new files too.
 */
const root = resolve(dirname(fileURLToPath(import.meta.url)), "..");
const MAX_LINES = 400;
const FOLDERS = ["src", "plugins", "bench", "scripts", "bin"];

interface Text {
  /** Relative to the repository, with "/". */
  path: string;
  text: string;
}

/** The files of the rule: every .ts / .js under FOLDERS, tests and generated declarations left out. */
function sources(dir: string): string[] {
  const out: string[] = [];
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) {
      if (entry.name !== "node_modules") out.push(...sources(path));
    } else if (/\.(ts|js)$/.test(entry.name) && !/\.test\.ts$|\.d\.ts$/.test(entry.name)) out.push(path);
  }
  return out;
}

/** The comments before a file's first token (a `#!` line left out), as one text. */
function openingComment(text: string): string {
  const rest = text.startsWith("#!") ? text.slice(text.indexOf("\n") + 1) : text;
  const ranges = ts.getLeadingCommentRanges(rest, 0) ?? [];
  return ranges.map((range) => rest.slice(range.pos, range.end)).join("\n");
}

/** The files over MAX_LINES lines whose opening comment does not give the reason, with their length. */
function overLongWithoutReason(files: Text[]): string[] {
  return files
    .map((file) => ({ file, lines: file.text.split("\n").length - (file.text.endsWith("\n") ? 1 : 0) }))
    .filter(({ file, lines }) => lines > MAX_LINES && !/\b400 lines\b/.test(openingComment(file.text)))
    .map(({ file, lines }) => `${file.path}: ${lines} lines`);
}

const onDisk = (): Text[] =>
  FOLDERS.flatMap((folder) => sources(join(root, folder))).map((path) => ({
    path: relative(root, path).split(sep).join("/"),
    text: readFileSync(path, "utf8"),
  }));

describe("file length", () => {
  it(`no source file is over ${MAX_LINES} lines without a reason in its opening comment`, () => {
    const files = onDisk();
    expect(files.map((f) => f.path)).toEqual(expect.arrayContaining(["src/gateway.ts", "bin/clawdis.js"]));
    expect(overLongWithoutReason(files)).toEqual([]);
  });

  it("flags a long file without the reason, or with it only in a later comment (the check can fail)", () => {
    const body = Array.from({ length: MAX_LINES }, (_, i) => `export const x${i} = ${i};`).join("\n");
    const files: Text[] = [
      { path: "bare.ts", text: `${body}\nexport const last = 1;\n` },
      { path: "later.ts", text: `import "./a.js";\n// Over 400 lines: a reason too late.\n${body}\n` },
      { path: "given.ts", text: `// Over 400 lines: one state machine.\nimport "./a.js";\n${body}\n` },
      { path: "block.ts", text: `/**\n * Just over 400 lines, by design.\n */\n${body}\n` },
      { path: "shebang.js", text: `#!/usr/bin/env node\n// Over 400 lines: the command.\n${body}\n` },
      { path: "short.ts", text: `${body}\n` },
    ];
    expect(overLongWithoutReason(files)).toEqual(["bare.ts: 401 lines", "later.ts: 402 lines"]);
  });
});
