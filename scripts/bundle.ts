/**
 * `node dist/scripts/bundle.js` (part of `npm run build`, `npm test` and `prepare`, after tsc): the start-up
 * build of the `clawdis` command, `dist/bundle/clawdis.cjs`, and its V8 code cache (bundle-cache.ts).
 *
 * Contract of the bundle (bin/clawdis.js relies on each point):
 * - one file, built by esbuild from `src/main.ts`: strict CommonJS inside one function expression
 *   `(function (BUNDLE_PARAMS) { … })`, so that the loader and the cache trainer compile exactly the same source;
 *   its last line is `//# clawdis-bundle <id>`, the SHA-1 of everything before it, which includes a line
 *   `//# clawdis-packages <sha-256>` of the REQUIRED_PACKAGES files it was built with (`buildStartup`);
 * - inside: our sources and the pure-JS packages most commands load (BUNDLED); `import()` between our modules
 *   stays lazy (a module is evaluated when first imported), and so does a module's first evaluation;
 * - every other package stays a package, loaded by Node as written: a static import becomes `require`, an
 *   `import()` a call of `__clawdisImport` (rewrite-imports.ts says why). A package written both ways, a BUNDLED
 *   package behind `import()`, or an ES-module-only package imported statically fails the build (two copies; or
 *   `require(esm)`, which Node 20 before 20.19 lacks);
 * - esbuild's warnings fail the build (`import.meta.dirname`, say, would be empty in CommonJS);
 * - modules that import an ES-module-only package (ESM_BOUNDARY) are not bundled: they are imported, with
 *   `import()` only, from their tsc output (`dist/plugins/…`);
 * - a package of PACKAGE_BUNDLES (package-bundles.ts) is built into a file of its own beside the bundle, which the
 *   loader requires for its `__clawdisImport` and, for REQUIRED_PACKAGES, for the bundle's `require`; our sources
 *   must import the first with `import()` only and the second statically only.
 */
import { createHash } from "node:crypto";
import { readFileSync } from "node:fs";
import { mkdir, readFile, rename, rm, writeFile } from "node:fs/promises";
import { createRequire } from "node:module";
import { dirname, join, relative, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { build, type Plugin } from "esbuild";
import { toAscii } from "./bundle-ascii.js";
import { trainCache } from "./bundle-cache.js";
import { bundleIdLine } from "./bundle-id.js";
import {
  buildPackageBundles,
  PACKAGE_BUNDLES,
  packageBundlePath,
  REQUIRED_PACKAGES,
} from "./package-bundles.js";
import { IMPORT_FUNCTION, rewriteImports } from "./rewrite-imports.js";

/**
 * Packages compiled into the bundle: pure JavaScript that every command loads (the command line). The config file's
 * validators (zod, JSON5) are files of their own (REQUIRED_PACKAGES): only a config not in the config cache needs
 * them.
 */
export const BUNDLED = ["commander"];

/** Modules kept as ES modules (they import `@whiskeysockets/baileys`, an ES-module-only package). */
export const ESM_BOUNDARY = ["plugins/whatsapp/connection.ts", "plugins/whatsapp/login.ts"];

export const BUNDLE_PARAMS = `exports, require, module, __filename, __dirname, __importMetaUrl, ${IMPORT_FUNCTION}`;
function packageName(specifier: string): string {
  const parts = specifier.split("/");
  return specifier.startsWith("@") ? parts.slice(0, 2).join("/") : parts[0]!;
}

/** A package that `require` cannot load on Node 20 before 20.19: no CommonJS entry point. */
function isEsmOnly(name: string, root: string): boolean {
  try {
    const entry = createRequire(join(root, "package.json")).resolve(name);
    if (entry.endsWith(".mjs")) return true;
    if (entry.endsWith(".cjs")) return false;
    const manifest = JSON.parse(readFileSync(join(root, "node_modules", name, "package.json"), "utf8")) as {
      type?: string;
    };
    return manifest.type === "module";
  } catch {
    return true;
  }
}

/** How each package left outside the bundle is imported: "static" and/or "dynamic", by which files. */
type ExternalUses = Map<string, { kinds: Set<"static" | "dynamic">; importers: Set<string> }>;

function note(uses: ExternalUses, name: string, kind: "static" | "dynamic", importer: string): void {
  const use = uses.get(name) ?? { kinds: new Set(), importers: new Set() };
  use.kinds.add(kind);
  use.importers.add(importer);
  uses.set(name, use);
}

/** esbuild plugin: rewrites leaving `import()` calls, keeps packages (but BUNDLED) and ESM_BOUNDARY outside. */
function externals(root: string, outFile: string, uses: ExternalUses, problems: string[]): Plugin {
  const boundary = new Set(ESM_BOUNDARY.map((file) => resolve(root, file)));
  // tsc's output of a boundary module, relative to the bundle.
  const where = (target: string) =>
    relative(dirname(outFile), join(root, "dist", relative(root, target))).replace(/\.ts$/, ".js");
  return {
    name: "clawdis-externals",
    setup(b) {
      b.onLoad({ filter: /\.ts$/ }, async (args) => {
        if (args.path.includes(`${join("node_modules", "")}`)) return undefined;
        const text = await readFile(args.path, "utf8");
        const rewritten = rewriteImports(args.path, text, boundary, where);
        for (const specifier of rewritten.specifiers) {
          if (!specifier.startsWith("node:")) {
            note(uses, packageName(specifier), "dynamic", relative(root, args.path));
          }
        }
        return { contents: rewritten.text, loader: "ts" };
      });
      b.onResolve({ filter: /^[^./]/ }, (args) => {
        if (args.path.startsWith("node:")) return { external: true };
        const name = packageName(args.path);
        if (BUNDLED.includes(name)) return undefined;
        note(uses, name, "static", relative(root, args.importer));
        return { external: true };
      });
      b.onResolve({ filter: /^\.\.?\// }, (args) => {
        const target = resolve(args.resolveDir, args.path.replace(/\.js$/, ".ts"));
        if (!boundary.has(target)) return undefined;
        problems.push(
          `${relative(root, args.importer)} imports ${args.path} statically: it is kept as an ES module (ESM_BOUNDARY), import it with import()`,
        );
        return { path: where(target), external: true };
      });
    },
  };
}

function checkUses(uses: ExternalUses, root: string, problems: string[]): void {
  for (const [name, use] of uses) {
    const importers = [...use.importers].join(", ");
    if (BUNDLED.includes(name)) {
      problems.push(`${name} is bundled but imported with import() (${importers}): import it statically`);
    } else if (REQUIRED_PACKAGES.includes(name) && use.kinds.has("dynamic")) {
      problems.push(
        `${name} is required from a bundle of its own (REQUIRED_PACKAGES) but imported with import() (${importers}): import it statically`,
      );
    } else if (
      PACKAGE_BUNDLES.includes(name) &&
      !REQUIRED_PACKAGES.includes(name) &&
      use.kinds.has("static")
    ) {
      problems.push(
        `${name} has a bundle of its own (PACKAGE_BUNDLES) but is imported statically (${importers}): import it with import()`,
      );
    } else if (use.kinds.has("static") && use.kinds.has("dynamic")) {
      problems.push(`${name} is imported both statically and with import() (${importers}): pick one`);
    } else if (use.kinds.has("static") && isEsmOnly(name, root)) {
      problems.push(
        `${name} is an ES-module-only package imported statically by ${importers}: add the importer to ESM_BOUNDARY`,
      );
    }
  }
}

/**
 * Builds the bundle of `<root>/src/main.ts` into `outFile` (default `<root>/dist/bundle/clawdis.cjs`); returns its
 * path. Throws with every problem found, writing nothing. Any cache next to `outFile` is removed first.
 */
export async function buildBundle(
  root: string,
  outFile = join(root, "dist", "bundle", "clawdis.cjs"),
  /** The digest of the REQUIRED_PACKAGES files beside it (`requiredDigest`), written into the text the id covers. */
  requiredPackages?: string,
): Promise<string> {
  const uses: ExternalUses = new Map();
  const problems: string[] = [];
  const result = await build({
    absWorkingDir: root,
    entryPoints: [join(root, "src", "main.ts")],
    bundle: true,
    write: false,
    metafile: true,
    platform: "node",
    format: "cjs",
    target: "node20",
    outfile: outFile,
    tsconfig: join(root, "tsconfig.json"),
    define: { "import.meta.url": "__importMetaUrl" },
    // Strict like the ES modules it comes from, whatever the tsconfig says.
    banner: { js: `(function (${BUNDLE_PARAMS}) {\n"use strict";` },
    footer: { js: "})" },
    logLevel: "silent",
    // Whitespace and syntax only: 30 % less text to read and hold at every start (a third of the bundle was
    // indentation). Names are kept, so stack traces and profiles still name the functions; a stack trace in the
    // TypeScript files comes from the compiled modules (`node --enable-source-maps`, bin/clawdis.js).
    minifyWhitespace: true,
    minifySyntax: true,
    legalComments: "none",
    plugins: [externals(root, outFile, uses, problems)],
  });
  checkUses(uses, root, problems);
  // e.g. `import.meta.dirname`, which CommonJS output leaves empty: a warning here is a bug at run time.
  for (const warning of result.warnings) {
    const at = warning.location ? `${warning.location.file}:${warning.location.line}: ` : "";
    problems.push(`${at}${warning.text}`);
  }
  for (const output of Object.values(result.metafile.outputs)) {
    for (const left of output.imports.filter((i) => i.kind === "dynamic-import")) {
      problems.push(`import("${left.path}") is left in the bundle: it fails with the code cache on Node 20`);
    }
  }
  if (problems.length > 0) throw new Error(`the bundle cannot be built:\n  ${problems.join("\n  ")}`);
  const output = result.outputFiles.find((file) => file.path === outFile);
  if (!output) throw new Error(`esbuild wrote no ${outFile}`);
  // ASCII, so that bin/clawdis.js reads it as latin1 (bundle-ascii.ts); a raw template that needs it throws here.
  let text: string;
  try {
    text = toAscii(output.text);
  } catch (error) {
    throw new Error(`the bundle cannot be built:\n  ${(error as Error).message}`);
  }
  // The id is the config cache's schema fingerprint: it covers the validators required from their own files too.
  const body =
    (text.endsWith("\n") ? text : `${text}\n`) +
    (requiredPackages ? `${PACKAGES_PREFIX}${requiredPackages}\n` : "");
  await mkdir(dirname(outFile), { recursive: true });
  // The old cache goes first: it must never sit next to a bundle it was not made from.
  await rm(`${outFile}.cache`, { force: true });
  const tmp = `${outFile}.tmp-${process.pid}`;
  await writeFile(tmp, body + bundleIdLine(body));
  await rename(tmp, outFile);
  return outFile;
}

/**
 * The start-up build of `<root>`: the packages' files of their own first (package-bundles.ts), then the bundle
 * (`buildBundle`), so that a new bundle is never written without the files it was built with. When either fails,
 * no new bundle is written and the loader runs the compiled modules (which tsc has just made newer). Returns the
 * bundle's path.
 */
export async function buildStartup(
  root: string,
  outFile = join(root, "dist", "bundle", "clawdis.cjs"),
): Promise<string> {
  await buildPackageBundles(root, dirname(outFile));
  return buildBundle(root, outFile, await requiredDigest(dirname(outFile)));
}

/** The line before the id line that names the REQUIRED_PACKAGES files the bundle was built with. */
export const PACKAGES_PREFIX = "//# clawdis-packages ";

/**
 * The SHA-256 of the REQUIRED_PACKAGES files beside the bundle in `bundleDir`, in that order: the config file's
 * validators, whose code decides what the config cache may keep (core/config-cache.ts keys it by the bundle's id).
 */
export async function requiredDigest(bundleDir: string): Promise<string> {
  const hash = createHash("sha256");
  for (const name of REQUIRED_PACKAGES) hash.update(await readFile(packageBundlePath(bundleDir, name)));
  return hash.digest("hex");
}

/**
 * `node dist/scripts/bundle.js [--optional]`. With `--optional` (the prepare script: `npm install` must not fail
 * for the sake of a faster start) a bundle that cannot be built is said on stderr and the exit code stays 0:
 * bin/clawdis.js then runs the compiled modules. Without it (`npm run build`, `npm test`) that is exit 1.
 */
async function cli(optional: boolean): Promise<void> {
  const root = resolve(dirname(fileURLToPath(import.meta.url)), "..", "..");
  try {
    const bundle = await buildStartup(root);
    const failed = trainCache(root, bundle);
    if (failed) {
      process.stderr.write(
        `bundle: no code cache (clawdis starts slower, nothing else changes): ${failed}\n`,
      );
    }
  } catch (error) {
    const why = error instanceof Error ? error.message : String(error);
    process.stderr.write(`bundle: ${why}\n`);
    if (optional) process.stderr.write("bundle: clawdis runs from the compiled modules in dist/ instead\n");
    else process.exitCode = 1;
  }
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  await cli(process.argv.includes("--optional"));
}
