/**
 * Packages built each into one CommonJS file of their own next to the start-up bundle,
 * `dist/bundle/packages/<name>.cjs`, which `bin/clawdis.js` requires when the bundle imports that package: with
 * `__clawdisImport(<name>)`, or with `require(<name>)` for the packages our sources import statically
 * (REQUIRED_PACKAGES). Package names only; anything else is Node's `import()` or `require`.
 *
 * Why: Node resolves, reads and compiles a package file by file. The model SDK (`openai`) is ~150 ES modules:
 * Node's `import()` of it took ~95 ms of the event loop (~115 ms of CPU) after every gateway start and in every
 * one-shot `clawdis agent`; as one file, ~17 ms. The packages every gateway loads after it listens go the same way
 * (measured alone, import() against the file): the lock library with its dependencies (`proper-lockfile`,
 * graceful-fs: 22 → 10 ms), the config watcher (`chokidar`: 20 → 8 ms) and the event-stream parser
 * (`eventsource-parser`: 10 → 2 ms). They stay out of the start-up bundle itself because no command needs them to
 * start: inside, every command would read them. So do the config file's validators, which only a config that is
 * not in the config cache needs (core/config-cache.ts): zod (0.7 MB, 45 % of what the bundle was: every command
 * read and compiled it, ~10 ms more per start in fresh processes; as one file it loads in ~54 ms where Node takes
 * ~78 ms from node_modules) and JSON5.
 *
 * Contract:
 * - a listed package not in REQUIRED_PACKAGES is imported by our sources with `import()` only, and one in it
 *   statically only (bundle.ts `checkUses` fails the build otherwise);
 * - the file is esbuild's bundle of what `require(<name>)` resolves to from the checkout, the package's own
 *   dependencies inside (one file, nothing but Node's modules required from it); its `module.exports` is the
 *   package's, so an ES module compiled to CommonJS keeps its `__esModule` mark;
 * - the folder is emptied before the files are written, each written whole (temporary file, then rename): a file
 *   there is always of the same build as the bundle next to it (bundle.ts `buildStartup` builds them first).
 */
import { mkdir, rename, rm, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { build } from "esbuild";

/** The packages our sources import statically that are built into a file of their own (see above). */
export const REQUIRED_PACKAGES = ["zod", "json5"];

/** The packages built into a file of their own (see above). */
export const PACKAGE_BUNDLES = [
  "openai",
  "proper-lockfile",
  "chokidar",
  "eventsource-parser",
  ...REQUIRED_PACKAGES,
];

/** The folder of the packages' files, for the start-up bundle in `bundleDir`. */
function packagesDir(bundleDir: string): string {
  return join(bundleDir, "packages");
}

/** Where the file of package `name` goes, for the start-up bundle in `bundleDir`. */
export function packageBundlePath(bundleDir: string, name: string): string {
  return join(packagesDir(bundleDir), `${name}.cjs`);
}

/** Builds every PACKAGE_BUNDLES file for the bundle in `bundleDir` from the packages installed in `root`. */
export async function buildPackageBundles(root: string, bundleDir: string): Promise<string[]> {
  const folder = packagesDir(bundleDir);
  await rm(folder, { recursive: true, force: true });
  await mkdir(folder, { recursive: true });
  const written: string[] = [];
  for (const name of PACKAGE_BUNDLES) {
    const outFile = packageBundlePath(bundleDir, name);
    const result = await build({
      absWorkingDir: root,
      stdin: {
        contents: `module.exports = require(${JSON.stringify(name)});`,
        resolveDir: root,
        loader: "js",
      },
      bundle: true,
      write: false,
      platform: "node",
      format: "cjs",
      target: "node20",
      outfile: outFile,
      logLevel: "silent",
      minifyWhitespace: true,
      minifySyntax: true,
      legalComments: "none",
    });
    const problems = result.warnings.map((w) => `${name}: ${w.text}`);
    if (problems.length > 0)
      throw new Error(`the bundle of ${name} cannot be built:\n  ${problems.join("\n  ")}`);
    const output = result.outputFiles.find((file) => file.path === outFile);
    if (!output) throw new Error(`esbuild wrote no ${outFile}`);
    const tmp = `${outFile}.tmp-${process.pid}`;
    await writeFile(tmp, output.contents);
    await rename(tmp, outFile);
    written.push(outFile);
  }
  return written;
}
