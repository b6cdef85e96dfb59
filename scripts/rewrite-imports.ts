import { dirname, resolve } from "node:path";
import ts from "typescript";

/** The function the bundle calls instead of `import()` (a parameter of the bundle; bin/clawdis.js passes it). */
export const IMPORT_FUNCTION = "__clawdisImport";

export interface ImportRewrite {
  /** The source with the rewritten calls; unchanged when there were none. */
  text: string;
  /** The string specifiers of the calls rewritten (bare packages, `node:` modules), in order. */
  specifiers: string[];
}

/**
 * Rewrites the `import()` calls of one source file that leave the bundle into calls of IMPORT_FUNCTION: every
 * call whose specifier is not a relative string (a package, a `node:` module, a computed URL), and relative ones
 * naming a module of `boundary` (absolute .ts paths), which become `IMPORT_FUNCTION(new URL(<where>, import.meta.url)
 * .href)` with `where(target)` giving its place relative to the bundle. Relative calls into the bundle stay
 * `import()` (esbuild keeps them lazy inside it). Why: on Node 20, `import()` in a script compiled from a V8 code
 * cache fails ("A dynamic import callback was not specified"). Found on the syntax tree: strings, comments and
 * `typeof import("x")` types are left alone.
 */
export function rewriteImports(
  file: string,
  text: string,
  boundary: ReadonlySet<string>,
  where: (target: string) => string,
): ImportRewrite {
  if (!text.includes("import(")) return { text, specifiers: [] };
  const source = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true, ts.ScriptKind.TS);
  const edits: { start: number; end: number; text: string }[] = [];
  const specifiers: string[] = [];
  const visit = (node: ts.Node): void => {
    if (ts.isCallExpression(node) && node.expression.kind === ts.SyntaxKind.ImportKeyword) {
      const arg = node.arguments[0];
      const literal = arg && ts.isStringLiteralLike(arg) ? arg.text : undefined;
      if (literal?.startsWith(".")) {
        const target = resolve(dirname(file), literal.replace(/\.js$/, ".ts"));
        if (boundary.has(target)) {
          const url = `new URL(${JSON.stringify(where(target))}, import.meta.url).href`;
          edits.push({ start: node.getStart(source), end: node.end, text: `${IMPORT_FUNCTION}(${url})` });
        }
      } else {
        if (literal !== undefined) specifiers.push(literal);
        edits.push({
          start: node.expression.getStart(source),
          end: node.expression.end,
          text: IMPORT_FUNCTION,
        });
      }
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  let out = text;
  for (const edit of edits.sort((a, b) => b.start - a.start)) {
    out = out.slice(0, edit.start) + edit.text + out.slice(edit.end);
  }
  return { text: out, specifiers };
}
