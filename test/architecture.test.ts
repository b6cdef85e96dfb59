import { readdirSync, readFileSync, statSync } from "node:fs";
import { dirname, join, relative, resolve, sep } from "node:path";
import { fileURLToPath } from "node:url";
import ts from "typescript";
import { describe, expect, it } from "vitest";

/**
 * The dependency rules of ARCHITECTURE.md, checked on the source with the TypeScript compiler: every import
 * (static, type-only, side-effect `import "x"`, `export … from`, literal `import()`, `import x = require()`) is
 * read from the syntax tree and resolved the way tsc resolves it (tsconfig.json, NodeNext), so no spelling of an
 * import escapes a rule:
 * - no file of `src/` (tests included) imports `plugins/`, except the composition root `src/main.ts`;
 * - a plugin's files import only `src/plugin-api/`, their own folder and packages (their SDK);
 * - a plugin's `config.ts` (its config section) imports only `zod` and, type-only, the plugin API;
 * - only `src/agent/llm-client.ts` imports `openai`;
 * - an `import()` whose specifier is not a literal (unresolvable here) exists only in the plugin loader;
 * - the read-only commands (`sessions`, `status`, `doctor`), the CLI's start and a plugin's commands module
 *   (`cli-commands.ts`) never reach the model client or a plugin's runtime;
 * - the files of `src/` (tests left out) import one another in no circle (type-only and `import()` count).
 */
const root = resolve(dirname(fileURLToPath(import.meta.url)), "..");

const parsedConfig = ts.parseJsonConfigFileContent(
  ts.readConfigFile(join(root, "tsconfig.json"), ts.sys.readFile).config,
  ts.sys,
  root,
);
const compilerOptions = parsedConfig.options;
const resolutionCache = ts.createModuleResolutionCache(root, (name) => name, compilerOptions);

interface ImportSite {
  spec: string;
  kind: "static" | "side-effect" | "re-export" | "dynamic" | "require";
  typeOnly: boolean;
}

/** Every import of a TypeScript source text; a non-literal `import()` is reported with `spec` "<expression>". */
function importsIn(fileName: string, text: string): ImportSite[] {
  const source = ts.createSourceFile(fileName, text, ts.ScriptTarget.Latest, true, ts.ScriptKind.TS);
  const sites: ImportSite[] = [];
  const literal = (node: ts.Node | undefined): string | undefined =>
    node && (ts.isStringLiteral(node) || ts.isNoSubstitutionTemplateLiteral(node)) ? node.text : undefined;
  const visit = (node: ts.Node): void => {
    if (ts.isImportDeclaration(node)) {
      const spec = literal(node.moduleSpecifier);
      if (spec !== undefined) {
        const clause = node.importClause;
        const typeOnly =
          clause?.isTypeOnly === true ||
          (clause !== undefined &&
            clause.name === undefined &&
            clause.namedBindings !== undefined &&
            ts.isNamedImports(clause.namedBindings) &&
            clause.namedBindings.elements.length > 0 &&
            clause.namedBindings.elements.every((element) => element.isTypeOnly));
        sites.push({ spec, kind: clause === undefined ? "side-effect" : "static", typeOnly });
      }
    } else if (ts.isExportDeclaration(node)) {
      const spec = literal(node.moduleSpecifier);
      if (spec !== undefined) sites.push({ spec, kind: "re-export", typeOnly: node.isTypeOnly });
    } else if (ts.isImportEqualsDeclaration(node) && ts.isExternalModuleReference(node.moduleReference)) {
      const spec = literal(node.moduleReference.expression);
      if (spec !== undefined) sites.push({ spec, kind: "require", typeOnly: node.isTypeOnly });
    } else if (ts.isCallExpression(node) && node.expression.kind === ts.SyntaxKind.ImportKeyword) {
      sites.push({ spec: literal(node.arguments[0]) ?? "<expression>", kind: "dynamic", typeOnly: false });
    } else if (ts.isImportTypeNode(node) && ts.isLiteralTypeNode(node.argument)) {
      const spec = literal(node.argument.literal);
      if (spec !== undefined) sites.push({ spec, kind: "static", typeOnly: true });
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return sites;
}

interface ResolvedImport extends ImportSite {
  /** Repo-relative path of the file it resolves to (`node_modules/…` for packages); undefined: unresolved. */
  target: string | undefined;
  external: boolean;
}

/** Resolves an import of `file` (absolute) as tsc does. Node built-ins are external without a target. */
function resolveImport(file: string, site: ImportSite): ResolvedImport {
  if (site.spec === "<expression>") return { ...site, target: undefined, external: false };
  if (site.spec.startsWith("node:")) return { ...site, target: site.spec, external: true };
  const { resolvedModule } = ts.resolveModuleName(site.spec, file, compilerOptions, ts.sys, resolutionCache);
  if (!resolvedModule) return { ...site, target: undefined, external: !site.spec.startsWith(".") };
  return {
    ...site,
    target: relative(root, resolvedModule.resolvedFileName).split(sep).join("/"),
    external: resolvedModule.isExternalLibraryImport === true,
  };
}

function sourceFiles(dir: string, withTests: boolean): string[] {
  const out: string[] = [];
  for (const name of readdirSync(dir)) {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) out.push(...sourceFiles(path, withTests));
    else if (name.endsWith(".ts") && !name.endsWith(".d.ts") && (withTests || !name.endsWith(".test.ts")))
      out.push(path);
  }
  return out;
}

const rel = (file: string) => relative(root, file).split(sep).join("/");

interface SourceFile {
  /** Absolute path (where it would be; the text may be synthetic). */
  path: string;
  text: string;
}

const onDisk = (files: string[]): SourceFile[] =>
  files.map((path) => ({ path, text: readFileSync(path, "utf8") }));

function importsOf(file: SourceFile): ResolvedImport[] {
  return importsIn(file.path, file.text).map((site) => resolveImport(file.path, site));
}

const describeSite = (file: SourceFile, site: ResolvedImport) =>
  `${rel(file.path)}: ${site.kind}${site.typeOnly ? " type" : ""} import of "${site.spec}"${site.target ? ` (${site.target})` : ""}`;

/** Rule: nothing in `src/` but the composition root imports `plugins/`, in any way. */
function coreOffenders(files: SourceFile[]): string[] {
  return files
    .filter((file) => rel(file.path) !== "src/main.ts")
    .flatMap((file) =>
      importsOf(file)
        .filter((site) => site.target?.startsWith("plugins/") || site.spec.includes("plugins/"))
        .map((site) => describeSite(file, site)),
    );
}

/** Rule: a plugin imports only the plugin API, its own folder and packages; unresolved relative imports count. */
function pluginOffenders(files: SourceFile[]): string[] {
  return files.flatMap((file) => {
    const own = rel(file.path).split("/").slice(0, 2).join("/");
    return importsOf(file)
      .filter((site) => !site.external)
      .filter((site) => !(site.target?.startsWith(`${own}/`) || site.target?.startsWith("src/plugin-api/")))
      .map((site) => describeSite(file, site));
  });
}

/** Rule: a plugin's config.ts imports only zod and, type-only, the plugin API. */
/**
 * A plugin's `config.ts` imports the plugin API's types and its own `config-schema.ts` (its types, and the module
 * itself only by `import()`); `config-schema.ts` imports zod alone.
 */
function configModuleOffenders(files: SourceFile[]): string[] {
  return files.flatMap((file) =>
    importsOf(file)
      .filter((site) => {
        if (file.path.endsWith("config-schema.ts")) return site.spec !== "zod";
        const own = site.target === rel(file.path).replace(/config\.ts$/, "config-schema.ts");
        const apiTypes = site.typeOnly && site.target?.startsWith("src/plugin-api/");
        return !(apiTypes || (own && (site.typeOnly || site.kind === "dynamic")));
      })
      .map((site) => describeSite(file, site)),
  );
}

/**
 * Every file `entries` load when they run: static imports (not type-only) and literal `import()`s, transitively,
 * for `dynamic: true`; static imports only otherwise. Packages are listed as `node_modules/<name>`.
 */
function loadedBy(entries: string[], dynamic: boolean): Set<string> {
  const seen = new Set<string>();
  const queue = entries.map((entry) => join(root, entry));
  while (queue.length > 0) {
    const file = queue.pop() as string;
    const name = rel(file);
    if (seen.has(name)) continue;
    seen.add(name);
    if (name.startsWith("node_modules/") || !name.endsWith(".ts")) continue;
    for (const site of importsOf({ path: file, text: readFileSync(file, "utf8") })) {
      if (site.typeOnly || site.target === undefined || site.target.startsWith("node:")) continue;
      if (site.kind === "dynamic" && !dynamic) continue;
      if (site.external) {
        seen.add(`node_modules/${packageOf(site.spec)}`);
        continue;
      }
      queue.push(join(root, site.target));
    }
  }
  return seen;
}

/** The repo-relative `.ts` file a relative `./x.js` names (for files not on disk, which tsc cannot resolve). */
function sourceFor(file: SourceFile, spec: string): string | undefined {
  if (!spec.startsWith(".")) return undefined;
  return rel(join(dirname(file.path), spec.replace(/\.js$/, ".ts")));
}

/**
 * Rule: the files' imports (every kind, type-only included) form no cycle. Returns each set of files that import
 * one another in a circle (a strongly connected component of two or more files, or a file importing itself),
 * each as its sorted repo-relative paths; only imports between the given files count.
 */
function importCycles(files: SourceFile[]): string[][] {
  const names = new Set(files.map((file) => rel(file.path)));
  const edges = new Map<string, string[]>();
  for (const file of files) {
    const targets = importsOf(file)
      .map((site) => site.target ?? sourceFor(file, site.spec))
      .filter((target): target is string => target !== undefined && names.has(target));
    edges.set(rel(file.path), [...new Set(targets)]);
  }
  // Tarjan's strongly connected components, iterative (no recursion limit on a long import chain).
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const onStack = new Set<string>();
  const stack: string[] = [];
  const cycles: string[][] = [];
  let next = 0;
  for (const start of edges.keys()) {
    if (index.has(start)) continue;
    const walk: { node: string; edge: number }[] = [{ node: start, edge: 0 }];
    index.set(start, next);
    low.set(start, next++);
    stack.push(start);
    onStack.add(start);
    while (walk.length > 0) {
      const top = walk[walk.length - 1] as { node: string; edge: number };
      const targets = edges.get(top.node) ?? [];
      if (top.edge < targets.length) {
        const target = targets[top.edge++] as string;
        if (!index.has(target)) {
          index.set(target, next);
          low.set(target, next++);
          stack.push(target);
          onStack.add(target);
          walk.push({ node: target, edge: 0 });
        } else if (onStack.has(target)) {
          low.set(top.node, Math.min(low.get(top.node) as number, index.get(target) as number));
        }
        continue;
      }
      walk.pop();
      const parent = walk[walk.length - 1];
      if (parent) low.set(parent.node, Math.min(low.get(parent.node) as number, low.get(top.node) as number));
      if (low.get(top.node) === index.get(top.node)) {
        const component: string[] = [];
        let member: string | undefined;
        do {
          member = stack.pop() as string;
          onStack.delete(member);
          component.push(member);
        } while (member !== top.node);
        if (component.length > 1 || targets.includes(top.node)) cycles.push(component.sort());
      }
    }
  }
  return cycles;
}

const packageOf = (spec: string) =>
  spec
    .split("/")
    .slice(0, spec.startsWith("@") ? 2 : 1)
    .join("/");

const srcFiles = onDisk(sourceFiles(join(root, "src"), true));
const pluginDirs = readdirSync(join(root, "plugins")).filter((name) =>
  statSync(join(root, "plugins", name)).isDirectory(),
);

describe("architecture", () => {
  it("no file of src/ imports a plugin, except src/main.ts", () => {
    expect(coreOffenders(srcFiles)).toEqual([]);
  });

  it("plugins import only the plugin API, their own folder and packages", () => {
    const files = onDisk(pluginDirs.flatMap((dir) => sourceFiles(join(root, "plugins", dir), false)));
    expect(pluginOffenders(files)).toEqual([]);
  });

  it("a plugin's config section module imports only the plugin API's types and its schema module zod alone", () => {
    const files = onDisk(
      pluginDirs
        .flatMap((dir) => [
          join(root, "plugins", dir, "config.ts"),
          join(root, "plugins", dir, "config-schema.ts"),
        ])
        .filter((path) => {
          try {
            return statSync(path).isFile();
          } catch {
            return false;
          }
        }),
    );
    expect(files.map((file) => rel(file.path))).toEqual(
      expect.arrayContaining([
        "plugins/telegram/config.ts",
        "plugins/telegram/config-schema.ts",
        "plugins/webhook/config.ts",
        "plugins/whatsapp/config.ts",
      ]),
    );
    expect(configModuleOffenders(files)).toEqual([]);
  });

  it("only the llm client imports the openai SDK", () => {
    const files = [
      ...srcFiles,
      ...onDisk(pluginDirs.flatMap((dir) => sourceFiles(join(root, "plugins", dir), true))),
    ];
    const importers = files
      .filter((file) => !file.path.endsWith(".test.ts"))
      .filter((file) => importsOf(file).some((site) => site.external && packageOf(site.spec) === "openai"))
      .map((file) => rel(file.path));
    expect(importers).toEqual(["src/agent/llm-client.ts"]);
  });

  it("only the plugin loader imports a module whose name is computed", () => {
    const files = [
      ...srcFiles,
      ...onDisk(pluginDirs.flatMap((dir) => sourceFiles(join(root, "plugins", dir), true))),
    ];
    const computed = files
      .filter((file) => importsIn(file.path, file.text).some((site) => site.spec === "<expression>"))
      .map((file) => rel(file.path));
    expect(computed).toEqual(["src/host/plugin-loader.ts"]);
  });

  it("no import cycle between files of src/ (tests left out), type-only and dynamic imports included", () => {
    const sources = srcFiles.filter((file) => !file.path.endsWith(".test.ts"));
    expect(sources.length).toBeGreaterThan(200);
    expect(importCycles(sources)).toEqual([]);
  });

  it("the CLI's start and the read-only commands never load the model client or a plugin's runtime", () => {
    const forbidden = (loaded: Set<string>) =>
      [...loaded].filter(
        (file) =>
          file === "node_modules/openai" ||
          file === "src/agent/llm-client.ts" ||
          (file.startsWith("plugins/") && !/^plugins\/[^/]+\/config(-schema)?\.ts$/.test(file)),
      );
    // What `clawdis <anything>` loads before a command runs: static imports only.
    expect(forbidden(loadedBy(["src/main.ts"], false))).toEqual([]);
    // A plugin's commands (`cli-commands.ts`, read for `clawdis --help`) load nothing of its runtime until one runs.
    const commandModules = pluginDirs
      .map((dir) => `plugins/${dir}/cli-commands.ts`)
      .filter((path) => statSync(join(root, path), { throwIfNoEntry: false })?.isFile());
    expect(commandModules).toContain("plugins/whatsapp/cli-commands.ts");
    for (const module of commandModules) {
      expect(
        forbidden(loadedBy([module], false)).filter((file) => file !== module),
        module,
      ).toEqual([]);
    }
    for (const command of ["src/cli/sessions.ts", "src/cli/status.ts", "src/cli/doctor.ts"]) {
      const loaded = loadedBy([command], true);
      expect(loaded.has("src/core/config.ts"), command).toBe(true);
      expect(forbidden(loaded), command).toEqual([]);
    }
  });
});

describe("architecture: what the gateway loads before it listens", () => {
  it("the gateway's start loads neither a config schema (zod), JSON5 nor croner (a config from the cache validates nothing)", () => {
    // Static imports only: what `clawdis gateway` evaluates whatever the config, and the built-in plugins'
    // definitions, which it loads before it listens (main.ts builtinPlugins). The schemas come by import() when a
    // file must be validated (a cache miss, a reload): the core's, and each section's (plugins/<id>/config-schema.ts).
    const definitions = ["webchat", "webhook", "telegram", "whatsapp"].map((id) => `plugins/${id}/index.ts`);
    const loaded = loadedBy(["src/cli/gateway.ts", ...definitions], false);
    expect(loaded.has("src/gateway.ts")).toBe(true);
    expect(loaded.has("plugins/telegram/config.ts")).toBe(true);
    expect(
      [...loaded].filter(
        (file) =>
          [
            "src/core/config.ts",
            "src/core/config-schema.ts",
            "node_modules/json5",
            "node_modules/croner",
            "node_modules/zod",
          ].includes(file) || file.endsWith("/config-schema.ts"),
      ),
    ).toEqual([]);
  });
});

describe("architecture: the checks see every kind of import (they can fail)", () => {
  const at = (path: string, text: string): SourceFile => ({ path: join(root, path), text });

  it("reads static, type-only, side-effect, re-export, dynamic, require and import-type imports", () => {
    const text = [
      'import a from "./a.js";',
      'import type { B } from "./b.js";',
      'import { type C } from "./c.js";',
      'import "./d.js";',
      'export { e } from "./e.js";',
      'const f = await import("./f.js");',
      "const g = await import(`./g.js`);",
      "const h = await import(name);",
      'import i = require("./i.js");',
      'type J = import("./j.js").J;',
    ].join("\n");
    expect(importsIn("x.ts", text)).toEqual([
      { spec: "./a.js", kind: "static", typeOnly: false },
      { spec: "./b.js", kind: "static", typeOnly: true },
      { spec: "./c.js", kind: "static", typeOnly: true },
      { spec: "./d.js", kind: "side-effect", typeOnly: false },
      { spec: "./e.js", kind: "re-export", typeOnly: false },
      { spec: "./f.js", kind: "dynamic", typeOnly: false },
      { spec: "./g.js", kind: "dynamic", typeOnly: false },
      { spec: "<expression>", kind: "dynamic", typeOnly: false },
      { spec: "./i.js", kind: "require", typeOnly: false },
      { spec: "./j.js", kind: "static", typeOnly: true },
    ]);
  });

  it("resolves as tsc does: ./x.js to x.ts, a folder path, packages to node_modules", () => {
    const file = join(root, "src", "main.ts");
    expect(resolveImport(file, { spec: "./cli/program.js", kind: "static", typeOnly: false }).target).toBe(
      "src/cli/program.ts",
    );
    const zod = resolveImport(file, { spec: "zod", kind: "static", typeOnly: false });
    expect(zod.external).toBe(true);
    expect(zod.target).toMatch(/^node_modules\/zod\//);
  });

  it.each([
    ['import "../../plugins/webhook/index.js";', "side-effect"],
    ['void import("../../plugins/webhook/index.js");', "dynamic"],
    ['export { default } from "../../plugins/webhook/index.js";', "re-export"],
    ['import type { WebhooksConfig } from "../../plugins/webhook/config.js";', "static type"],
  ])("flags a core file that does %s", (line, kind) => {
    expect(coreOffenders([at("src/core/sneaky.ts", line)])).toEqual([
      expect.stringContaining(`src/core/sneaky.ts: ${kind} import of "../../plugins/webhook/`),
    ]);
    // The composition root may.
    expect(coreOffenders([at("src/main.ts", line.replaceAll("../../", "../"))])).toEqual([]);
  });

  it("flags a plugin importing the core, another plugin, or a path that does not resolve", () => {
    const offenders = pluginOffenders([
      at("plugins/webhook/x.ts", 'import { loadConfig } from "../../src/core/config.js";'),
      at("plugins/webhook/y.ts", 'import "../webchat/index.js";'),
      at("plugins/webhook/z.ts", 'import "./missing.js";'),
      at(
        "plugins/webhook/ok.ts",
        'import "./config.js"; import type { X } from "../../src/plugin-api/index.js"; import "zod";',
      ),
    ]);
    expect(offenders.map((line) => line.split(":")[0])).toEqual([
      "plugins/webhook/x.ts",
      "plugins/webhook/y.ts",
      "plugins/webhook/z.ts",
    ]);
  });

  it("flags files that import one another in a circle, a type-only import included", () => {
    const cycles = importCycles([
      at("src/agent/a.ts", 'import { b } from "./b.js";'),
      at("src/agent/b.ts", 'import type { C } from "./c.js";'),
      at("src/agent/c.ts", 'export type { A } from "./a.js";'),
      at("src/agent/d.ts", 'import "./a.js"; import "./d.js";'),
      at("src/agent/e.ts", 'import "./a.js"; import "./b.js";'),
    ]);
    expect(cycles).toEqual(
      expect.arrayContaining([["src/agent/a.ts", "src/agent/b.ts", "src/agent/c.ts"], ["src/agent/d.ts"]]),
    );
    expect(cycles).toHaveLength(2);
    expect(importCycles([at("src/agent/a.ts", 'import "./b.js";'), at("src/agent/b.ts", "")])).toEqual([]);
  });

  it("flags a config module that imports more than its schema module and the plugin API's types", () => {
    expect(
      configModuleOffenders([
        at("plugins/telegram/config.ts", 'import { definePlugin } from "../../src/plugin-api/index.js";'),
        at("plugins/telegram/config.ts", 'import "./index.js";'),
        at("plugins/telegram/config.ts", 'import { z } from "zod";'),
        at("plugins/telegram/config.ts", 'import { telegramSchema } from "./config-schema.js";'),
        at(
          "plugins/telegram/config.ts",
          'import type { A } from "../../src/plugin-api/types.js"; import type { T } from "./config-schema.js"; const s = () => import("./config-schema.js");',
        ),
        at(
          "plugins/telegram/config-schema.ts",
          'import { z } from "zod"; import type { A } from "./config.js";',
        ),
      ]),
    ).toEqual([
      expect.stringContaining('static import of "../../src/plugin-api/index.js"'),
      expect.stringContaining('side-effect import of "./index.js"'),
      expect.stringContaining('static import of "zod"'),
      expect.stringContaining('static import of "./config-schema.js"'),
      expect.stringContaining('static type import of "./config.js"'),
    ]);
  });
});
