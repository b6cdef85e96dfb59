import { readFileSync, statSync } from "node:fs";
import { createRequire } from "node:module";
import { isAbsolute, join, resolve } from "node:path";
import { pathToFileURL } from "node:url";
import type { LoadedConfig } from "../core/config.js";
import { loadGatewayConfigCached } from "../core/config-cache.js";
import type { ConfigSectionEntry, ConfigSectionsSource } from "../core/config-sections.js";
import { ClawdisError, describeError } from "../core/errors.js";
import { type Env, expandHome } from "../core/paths.js";
import { withSchemas } from "../core/section-schema.js";
import type { PluginDefinition } from "../plugin-api/index.js";
import { validatePluginDefinition } from "./plugin-definition.js";

/** `exports` conditions, in the order an ESM `import` on Node honours them. */
const CONDITIONS = new Set(["import", "node", "default"]);

/** npm package names, optionally scoped, with an optional subpath (`@scope/name/sub`). */
const PACKAGE_SPEC = /^((?:@[a-z0-9][a-z0-9._~-]*\/)?[a-z0-9][a-z0-9._~-]*)(\/.+)?$/i;

function kindOf(path: string): "file" | "dir" | undefined {
  try {
    const stats = statSync(path);
    return stats.isDirectory() ? "dir" : stats.isFile() ? "file" : undefined;
  } catch {
    return undefined;
  }
}

function invalid(spec: string, problem: string, cause?: unknown): ClawdisError {
  return new ClawdisError("PLUGIN_INVALID", `Plugin "${spec}" (plugins.load): ${problem}`, { cause });
}

/** Explicit paths: `./x`, `../x`, `/abs`, `~/x` (and Windows absolute paths). Anything else may be a package. */
function isPathSpec(spec: string): boolean {
  return /^\.\.?([/\\]|$)/.test(spec) || spec === "~" || spec.startsWith("~/") || isAbsolute(spec);
}

/** The first target of an `exports` value whose condition this loader honours (object order, like Node). */
function conditionalTarget(value: unknown): string | undefined {
  if (typeof value === "string") return value;
  if (Array.isArray(value)) {
    for (const item of value) {
      const target = conditionalTarget(item);
      if (target !== undefined) return target;
    }
    return undefined;
  }
  if (value !== null && typeof value === "object") {
    for (const [condition, target] of Object.entries(value)) {
      if (!CONDITIONS.has(condition)) continue;
      const resolved = conditionalTarget(target);
      if (resolved !== undefined) return resolved;
    }
  }
  return undefined;
}

/** `exports` lookup for `subpath` ("." or "./x"). Exact keys only; `*` patterns are not supported. */
function exportsTarget(exports: unknown, subpath: string): string | undefined {
  const isSubpathMap =
    exports !== null &&
    typeof exports === "object" &&
    !Array.isArray(exports) &&
    Object.keys(exports).some((key) => key.startsWith("."));
  if (!isSubpathMap) return subpath === "." ? conditionalTarget(exports) : undefined;
  return conditionalTarget((exports as Record<string, unknown>)[subpath]);
}

function readPackageJson(spec: string, dir: string): Record<string, unknown> | undefined {
  const file = join(dir, "package.json");
  if (kindOf(file) !== "file") return undefined;
  try {
    const parsed: unknown = JSON.parse(readFileSync(file, "utf8"));
    if (parsed !== null && typeof parsed === "object" && !Array.isArray(parsed)) {
      return parsed as Record<string, unknown>;
    }
    throw new Error("not a JSON object");
  } catch (error) {
    throw invalid(spec, `${file} does not parse: ${describeError(error)}`, error);
  }
}

/** `file`, `file.js`, `file/index.js`: how a `main` without extension is commonly written. */
function fileCandidates(path: string): string[] {
  return [path, `${path}.js`, join(path, "index.js")];
}

/**
 * The module to import for folder `dir`: package.json `exports` (conditions import/node/default), else `main`,
 * else `index.js`. `subpath` is "." or "./x" (a package spec like `name/x`).
 */
function folderEntry(spec: string, dir: string, subpath: string): string {
  const pkg = readPackageJson(spec, dir);
  if (pkg?.exports !== undefined) {
    const target = exportsTarget(pkg.exports, subpath);
    if (target === undefined) {
      throw invalid(
        spec,
        `${join(dir, "package.json")} "exports" has no entry for "${subpath}" under the conditions import, node or default.`,
      );
    }
    const file = resolve(dir, target);
    if (kindOf(file) !== "file") {
      throw invalid(spec, `${join(dir, "package.json")} "exports" points to ${file}, which does not exist.`);
    }
    return file;
  }
  let candidates: string[];
  if (subpath !== ".") candidates = fileCandidates(resolve(dir, subpath));
  else if (typeof pkg?.main === "string") candidates = fileCandidates(resolve(dir, pkg.main));
  else candidates = [join(dir, "index.js")];
  const found = candidates.find((candidate) => kindOf(candidate) === "file");
  if (found === undefined) {
    throw invalid(
      spec,
      `${dir} has no entry point (looked for ${candidates.join(", ")}). Add "main" or "exports" to its package.json, or an index.js.`,
    );
  }
  return found;
}

/** Where `name` is installed: node_modules next to the config file first, then clawdis's own install. */
function findPackageDir(name: string, baseDir: string): string | undefined {
  const roots = new Set([
    ...(createRequire(join(baseDir, "noop.js")).resolve.paths(name) ?? []),
    ...(createRequire(import.meta.url).resolve.paths(name) ?? []),
  ]);
  for (const root of roots) {
    const dir = join(root, name);
    if (kindOf(join(dir, "package.json")) === "file") return dir;
  }
  return undefined;
}

/** The absolute file `spec` designates; throws PLUGIN_INVALID saying what was looked for. */
export function resolvePluginEntry(spec: string, baseDir: string, env: Env = process.env): string {
  if (isPathSpec(spec)) {
    const path = spec === "~" || spec.startsWith("~/") ? expandHome(spec, env) : resolve(baseDir, spec);
    const kind = kindOf(path);
    if (kind === "file") return path;
    if (kind === "dir") return folderEntry(spec, path, ".");
    throw invalid(spec, `${path} does not exist (relative paths are resolved against ${baseDir}).`);
  }
  // A bare spec that names an existing folder next to the config is that folder: it is what the user sees.
  const local = resolve(baseDir, spec);
  if (kindOf(local) === "dir") return folderEntry(spec, local, ".");
  const match = PACKAGE_SPEC.exec(spec);
  if (!match?.[1]) {
    throw invalid(spec, `not a folder (${local} does not exist) and not a package name.`);
  }
  const name = match[1];
  const subpath = match[2] ? `.${match[2]}` : ".";
  const dir = findPackageDir(name, baseDir);
  if (dir === undefined) {
    throw invalid(
      spec,
      `no folder ${local} and no package "${name}" in node_modules (searched from ${baseDir} and from clawdis's own install). Install it (npm install ${name}) or write a path starting with ./, ../, / or ~/.`,
    );
  }
  return folderEntry(spec, dir, subpath);
}

/** Node before 20.19 does not detect module syntax: explain its error for ESM in a file it treats as CommonJS. */
function moduleHint(error: unknown): string {
  const text = describeError(error);
  return /Cannot use import statement|Unexpected token 'export'/.test(text)
    ? ' (the file uses import/export: add "type": "module" to its package.json, or name it .mjs)'
    : "";
}

/**
 * Loads one entry of `plugins.load`: a folder (absolute, `~/…`, or relative to `baseDir`, the config file's
 * folder) or a package name (from node_modules next to the config, then from clawdis's own install).
 * Its default export must be a plugin definition for this gateway's API version.
 * Throws ClawdisError PLUGIN_INVALID naming the spec and what is wrong.
 */
export async function loadPluginModule(
  spec: string,
  baseDir: string,
  env: Env = process.env,
): Promise<PluginDefinition> {
  const file = resolvePluginEntry(spec, baseDir, env);
  let loaded: { default?: unknown };
  try {
    loaded = (await import(pathToFileURL(file).href)) as { default?: unknown };
  } catch (error) {
    throw invalid(spec, `importing ${file} failed: ${describeError(error)}${moduleHint(error)}`, error);
  }
  const origin = `Plugin "${spec}" (${file})`;
  if (loaded.default === undefined) {
    throw new ClawdisError(
      "PLUGIN_INVALID",
      `${origin} has no default export. Write: export default definePlugin({ apiVersion, id, create }).`,
    );
  }
  return validatePluginDefinition(loaded.default, origin);
}

/**
 * The config sections of the plugins `specs` names (entries of `plugins.load`), in order, each owned by its
 * plugin's id; plugins without a section give none. Loading a plugin imports its module, never runs `create`.
 * Throws ClawdisError PLUGIN_INVALID like `loadPluginModule`.
 */
export async function loadPluginSections(
  specs: readonly string[],
  baseDir: string,
  env: Env = process.env,
): Promise<ConfigSectionEntry[]> {
  const entries: ConfigSectionEntry[] = [];
  for (const spec of specs) {
    const definition = await loadPluginModule(spec, baseDir, env);
    if (definition.configSection) entries.push({ owner: definition.id, section: definition.configSection });
  }
  // A section may load its schema (plugin-api `PluginConfigSection.schema`): loaded here, before validation.
  await withSchemas(entries);
  return entries;
}

/**
 * The config as the gateway loads it: the core, the built-in `sections`, and the sections of the plugins in
 * `plugins.load`, which are loaded for them once the rest of the file validates (see `loadConfigWithPlugins`).
 */
export async function loadGatewayConfig(
  env: Env,
  sections: readonly ConfigSectionEntry[],
): Promise<LoadedConfig> {
  // Imported here, not with this module: a start from the config cache loads neither zod nor the schema.
  const { loadConfigWithPlugins } = await import("../core/config.js");
  return loadConfigWithPlugins(env, sections, (specs, baseDir) => loadPluginSections(specs, baseDir, env));
}

/**
 * `loadGatewayConfig` at the gateway's start: through the config cache (core/config-cache.ts) when `fingerprint`
 * (the start-up bundle's id) is known, so an unchanged file that loads no plugin is not parsed and validated again.
 */
export function loadGatewayConfigAtStart(
  env: Env,
  sections: ConfigSectionsSource,
  fingerprint: string | undefined,
): Promise<LoadedConfig> {
  return loadGatewayConfigCached(env, sections, fingerprint, (specs, baseDir) =>
    loadPluginSections(specs, baseDir, env),
  );
}
