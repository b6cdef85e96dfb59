/**
 * Packages built each into one CommonJS file of their own next to the start-up bundle,
 * `dist/bundle/packages/<name>.cjs`, which `bin/clawdis.js` requires when the bundle imports that package with
 * `__clawdisImport(<name>)` (package names only; anything else is Node's `import()`).
 *
 * Why: the model SDK (`openai`) is ~150 ES modules; Node's `import()` of it resolves, links and compiles each one
 * after every gateway start and in every one-shot `clawdis agent`, ~95 ms of the event loop on the two-core
 * machine (~115 ms of CPU). Its CommonJS build, as one file, loads in ~17 ms. It is kept out of the start-up bundle
 * itself because it is not needed to start: inside, every command would read its 300 KB.
 *
 * Contract:
 * - a listed package is imported by our sources with `import()` only (bundle.ts `checkUses` fails the build
 *   otherwise: a static import would load a second copy from node_modules);
 * - the file is esbuild's bundle of the package's CommonJS entry (what `require` resolves from the checkout), with
 *   the packages it requires left as `require` (resolved from the file's folder, as the bundle's are);
 * - the folder is emptied before the files are written, each written whole (temporary file, then rename): a file
 *   there is always of the same build as the bundle next to it.
 */
import { mkdir, rename, rm, writeFile } from "node:fs/promises";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import { build } from "esbuild";

/** The packages built into a file of their own (see above). */
export const PACKAGE_BUNDLES = ["openai"];

/** Where the file of package `name` goes, for the start-up bundle in `bundleDir`. */
export function packageBundlePath(bundleDir: string, name: string): string {
  return join(bundleDir, "packages", `${name}.cjs`);
}

/** Builds every PACKAGE_BUNDLES file for the bundle in `bundleDir` from the packages installed in `root`. */
export async function buildPackageBundles(root: string, bundleDir: string): Promise<string[]> {
  const folder = dirname(packageBundlePath(bundleDir, "x"));
  await rm(folder, { recursive: true, force: true });
  await mkdir(folder, { recursive: true });
  const written: string[] = [];
  for (const name of PACKAGE_BUNDLES) {
    const entry = createRequire(join(root, "package.json")).resolve(name);
    const outFile = packageBundlePath(bundleDir, name);
    const result = await build({
      absWorkingDir: root,
      entryPoints: [entry],
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
      plugins: [
        {
          name: "clawdis-package-externals",
          setup(b) {
            // The package's own files come in; other packages stay `require` (its optional integrations).
            b.onResolve({ filter: /^[^./]/ }, () => ({ external: true }));
          },
        },
      ],
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
