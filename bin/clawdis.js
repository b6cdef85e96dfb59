#!/usr/bin/env node
// The clawdis command. Both builds come from `npm install` (the prepare script) and `npm run build`:
// - dist/bundle/clawdis.cjs, the start-up bundle (scripts/bundle.ts says what it is), compiled with its V8 code
//   cache (scripts/bundle-cache.ts), runs when it is at least as new as dist/src/main.js;
// - else the compiled modules in dist/ (a plain `tsc` after the bundle makes it stale; and with
//   --enable-source-maps, whose stack traces then name the TypeScript files).
//
// CommonJS (bin/package.json), so that its first line runs before any asynchronous I/O: an ES module entry is read
// through libuv's threadpool, which fixes the pool's size before the module runs.

// The threadpool runs every fsync (journal, transcripts, store) and also the opens and reads on a message's way to
// the model; libuv's 4 threads let a few fsyncs hold those up (measured: p50 and p99 of hand-in -> model request
// ~15 % lower with 16). libuv reads this at the pool's first use, which is after this line. A value you set wins.
process.env.UV_THREADPOOL_SIZE ??= "16";

const { readFileSync, statSync } = require("node:fs");
const { createRequire, isBuiltin } = require("node:module");
const { dirname, join } = require("node:path");
const { pathToFileURL } = require("node:url");
const vm = require("node:vm");

const modules = join(__dirname, "..", "dist", "src", "main.js");
const bundle = join(__dirname, "..", "dist", "bundle", "clawdis.cjs");
const ID_PREFIX = "//# clawdis-bundle ";

function modifiedAt(path) {
  try {
    return statSync(path).mtimeMs;
  } catch {
    return undefined;
  }
}

/** The id a bundle's text ends with (scripts/bundle-id.ts), else undefined. */
function idOf(source) {
  const at = source.lastIndexOf(ID_PREFIX);
  return at < 0 ? undefined : source.slice(at + ID_PREFIX.length).trim() || undefined;
}

/** The code cache made from exactly this bundle text (its id comes first), else undefined. */
function cacheFor(id) {
  if (id === undefined) return undefined;
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
  // The bundle is ASCII (scripts/bundle-ascii.ts): read as latin1, V8 makes a one-byte string of it, three times
  // faster than a UTF-8 decode and half the memory.
  const source = readFileSync(bundle, "latin1");
  const id = idOf(source);
  const script = new vm.Script(source, { filename: bundle, cachedData: cacheFor(id) });
  const module = { exports: {} };
  script.runInThisContext()(
    module.exports,
    requireOutside(createRequire(bundle)),
    module,
    bundle,
    dirname(bundle),
    pathToFileURL(bundle).href,
    // The bundle's import() of what is not inside it (packages, plugins): Node's own, from this module (on Node 20,
    // import() in code compiled from a code cache fails), or a package's file of its own.
    importOutside,
  );
  return { entry: module.exports, id };
}

/** The file of its own beside the bundle of package `specifier` (scripts/package-bundles.ts), if it has one. */
function packageFile(specifier) {
  if (!/^[a-z0-9][a-z0-9._-]*$/.test(specifier) || isBuiltin(specifier)) return undefined;
  const file = join(dirname(bundle), "packages", `${specifier}.cjs`);
  return modifiedAt(file) === undefined ? undefined : file;
}

/**
 * The bundle's `require`: a package built into a file of its own beside the bundle (the config validators, zod and
 * JSON5, which only a config not in the config cache needs) is required from there; anything else as `base` does.
 */
function requireOutside(base) {
  const required = (specifier) => {
    const file = packageFile(specifier);
    return base(file ?? specifier);
  };
  return Object.assign(required, { resolve: base.resolve, cache: base.cache, main: base.main });
}

/**
 * What `importOutside` gave for each package taken from its own file: the same module again, as import() gives it,
 * without looking for the file again (a store update imports its lock library every time). A failed load is not kept.
 */
const imported = new Map();

/**
 * `import(specifier)` for the bundle. A package built into a file of its own beside the bundle
 * (scripts/package-bundles.ts: those a gateway loads after it listens; the model SDK takes ~95 ms as ES modules,
 * ~17 ms as one file) is required from there, on a later turn of the event loop as an import would be, and given as
 * import() gives a CommonJS module: itself when it was an ES module compiled to CommonJS (`__esModule`), else with
 * `default` added. Anything else is Node's.
 */
function importOutside(specifier) {
  const known = imported.get(specifier);
  if (known) return known;
  const file = packageFile(specifier);
  if (file === undefined) return import(specifier);
  const loading = new Promise((resolve, reject) => {
    setImmediate(() => {
      try {
        const exports = require(file);
        resolve(exports?.__esModule ? exports : { ...exports, default: exports });
      } catch (error) {
        imported.delete(specifier);
        reject(error);
      }
    });
  });
  imported.set(specifier, loading);
  return loading;
}

/**
 * `clawdis --version` (or `-v`) alone: the version from this package's package.json, without loading the program
 * (what src/main.ts `packageVersion` finds, printed as the program prints it); undefined for any other command
 * line, or when that file does not say it is clawdis's (then the program answers).
 */
function versionAsked() {
  const args = process.argv.slice(2);
  if (args.length !== 1 || (args[0] !== "--version" && args[0] !== "-v")) return undefined;
  try {
    const pkg = JSON.parse(readFileSync(join(__dirname, "..", "package.json"), "utf8"));
    return pkg.name === "clawdis" && typeof pkg.version === "string" && pkg.version ? pkg.version : undefined;
  } catch {
    return undefined;
  }
}

async function run() {
  const bundleTime = modifiedAt(bundle);
  const modulesTime = modifiedAt(modules);
  let entry;
  // The bundle's id is also the fingerprint of its config schema (src/core/config-cache.ts).
  let id;
  const version = (bundleTime !== undefined || modulesTime !== undefined) && versionAsked();
  if (version) {
    process.stdout.write(`${version}\n`);
    return;
  }
  if (bundleTime !== undefined && !process.sourceMapsEnabled && !(modulesTime > bundleTime)) {
    ({ entry, id } = loadBundle());
  } else if (modulesTime !== undefined) {
    entry = await import(pathToFileURL(modules).href);
  } else {
    process.stderr.write(
      "clawdis is not built yet: run `npm install` (or `npm run build`) in the clawdis folder.\n",
    );
    process.exit(1);
  }
  process.exitCode = await entry.main(process.argv.slice(2), id);
}

void run();
