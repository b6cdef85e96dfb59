#!/usr/bin/env node
// The clawdis command. Both builds come from `npm install` (the prepare script) and `npm run build`:
// - dist/bundle/clawdis.cjs, the start-up bundle (scripts/bundle.ts says what it is), compiled with its V8 code
//   cache (scripts/bundle-cache.ts), runs when it is at least as new as dist/src/main.js;
// - else the compiled modules in dist/ (a plain `tsc` after the bundle makes it stale; and with
//   --enable-source-maps, whose stack traces then name the TypeScript files).
import { readFileSync, statSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import vm from "node:vm";

const modules = fileURLToPath(new URL("../dist/src/main.js", import.meta.url));
const bundle = fileURLToPath(new URL("../dist/bundle/clawdis.cjs", import.meta.url));
const ID_PREFIX = "//# clawdis-bundle ";

function modifiedAt(path) {
  try {
    return statSync(path).mtimeMs;
  } catch {
    return undefined;
  }
}

/** The code cache made from exactly this bundle text (its id comes first), else undefined. */
function cacheFor(source) {
  const at = source.lastIndexOf(ID_PREFIX);
  if (at < 0) return undefined;
  const id = source.slice(at + ID_PREFIX.length).trim();
  let cache;
  try {
    cache = readFileSync(`${bundle}.cache`);
  } catch {
    return undefined;
  }
  // V8 checks only the source's length: a cache of another bundle of the same length would run that one's code.
  return cache.subarray(0, id.length).toString("latin1") === id ? cache.subarray(id.length) : undefined;
}

function loadBundle() {
  const source = readFileSync(bundle, "utf8");
  const script = new vm.Script(source, { filename: bundle, cachedData: cacheFor(source) });
  const module = { exports: {} };
  script.runInThisContext()(
    module.exports,
    createRequire(bundle),
    module,
    bundle,
    dirname(bundle),
    pathToFileURL(bundle).href,
    // The bundle's import() of what is not inside it (packages, plugins): Node's own, from this module (on Node 20,
    // import() in code compiled from a code cache fails).
    (specifier) => import(specifier),
  );
  return module.exports;
}

const bundleTime = modifiedAt(bundle);
const modulesTime = modifiedAt(modules);
let entry;
if (bundleTime !== undefined && !process.sourceMapsEnabled && !(modulesTime > bundleTime)) {
  entry = loadBundle();
} else if (modulesTime !== undefined) {
  entry = await import(pathToFileURL(modules).href);
} else {
  process.stderr.write(
    "clawdis is not built yet: run `npm install` (or `npm run build`) in the clawdis folder.\n",
  );
  process.exit(1);
}
process.exitCode = await entry.main(process.argv.slice(2));
