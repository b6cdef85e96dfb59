import { execFile } from "node:child_process";
import { createHash } from "node:crypto";
import { copyFile, mkdir, mkdtemp, readFile, rm, symlink, utimes, writeFile } from "node:fs/promises";
import { builtinModules, createRequire } from "node:module";
import { type AddressInfo, createServer } from "node:net";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import vm from "node:vm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { BUNDLE_PARAMS, buildBundle, buildStartup, PACKAGES_PREFIX } from "../scripts/bundle.js";
import { trainCache } from "../scripts/bundle-cache.js";
import { bundleId, bundleIdLine } from "../scripts/bundle-id.js";
import { buildPackageBundles, packageBundlePath } from "../scripts/package-bundles.js";
import { rewriteImports } from "../scripts/rewrite-imports.js";
import { startFakeOpenAI } from "../test/fakes/openai-server.js";
import { validateConfigText } from "./core/config.js";
import { builtinCliPlugins, builtinConfigSections, builtinPlugins } from "./main.js";

const repoRoot = join(dirname(fileURLToPath(import.meta.url)), "..");

describe("the composition root", () => {
  it("registers the config section of every built-in plugin, as a section whose plugin runs", async () => {
    const sections = await builtinConfigSections({});
    const plugins = await builtinPlugins();
    const declared = plugins.filter((plugin) => plugin.configSection !== undefined);
    expect(declared.length).toBeGreaterThan(0);
    for (const plugin of declared) {
      const entry = sections.find((candidate) => candidate.owner === plugin.id);
      expect(entry?.section, plugin.id).toBe(plugin.configSection);
      expect(entry?.unavailable, plugin.id).toBeUndefined();
    }
    // A section registered without a plugin belongs to no built-in plugin (else it would never warn rightly).
    for (const entry of sections.filter((candidate) => candidate.unavailable !== undefined)) {
      expect(plugins.map((plugin) => plugin.id)).not.toContain(entry.owner);
    }
  });

  it("registers the commands of every built-in plugin that adds some, with its settings", async () => {
    const known = await builtinCliPlugins();
    const adding = (await builtinPlugins()).filter((plugin) => plugin.cliCommands !== undefined);
    expect(adding.map((plugin) => plugin.id)).toContain("whatsapp");
    expect(known.map((entry) => entry.id)).toEqual(adding.map((plugin) => plugin.id));
    for (const plugin of adding) {
      const entry = known.find((candidate) => candidate.id === plugin.id);
      expect(entry?.cliCommands, plugin.id).toBe(plugin.cliCommands);
      expect(entry?.configSection, plugin.id).toBe(plugin.configSection);
      expect(entry?.configSchema, plugin.id).toBe(plugin.configSchema);
    }
  });

  it("warns about no built-in section: every transport of this build is there to run it", async () => {
    const options = {
      sections: await builtinConfigSections({ TELEGRAM_BOT_TOKEN: "1:x" }),
      unclaimed: "error" as const,
    };
    expect(validateConfigText("{ telegram: { botToken: '1:x' } }", "c.json", options).warnings).toEqual([]);
    expect(validateConfigText("{ webhooks: { a: {} } }", "c.json", options).warnings).toEqual([]);
  });
});

/**
 * What a command loads, seen by a module resolve hook in a child process running the sources (through tsx, so the
 * sources as they are, not a stale build): every module URL resolved while `script` ran.
 */
describe("lazy loading: what each command loads", () => {
  const mainUrl = pathToFileURL(join(repoRoot, "src", "main.ts")).href;
  let dir: string;
  let state: string;

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), "clawdis-lazy-"));
    state = join(dir, "state");
    await mkdir(join(state, "sessions"), { recursive: true });
    await writeFile(
      join(state, "sessions", "sessions.json"),
      JSON.stringify({ main: { sessionId: "a", updatedAt: 1 } }),
    );
    await writeFile(
      join(dir, "hook.mjs"),
      `import { appendFileSync } from "node:fs";
export async function resolve(specifier, context, next) {
  const result = await next(specifier, context);
  appendFileSync(process.env.CLAWDIS_TEST_MODULE_LOG, result.url + "\\n");
  return result;
}
`,
    );
  });
  afterAll(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  async function modulesLoadedBy(script: string, stateDir = state): Promise<string[]> {
    const log = join(dir, `modules-${Math.random().toString(36).slice(2)}.txt`);
    const register = `data:text/javascript,import{register}from"node:module";register(${JSON.stringify(pathToFileURL(join(dir, "hook.mjs")).href)});`;
    const env: NodeJS.ProcessEnv = {
      ...process.env,
      CLAWDIS_STATE_DIR: stateDir,
      HOME: dir,
      CLAWDIS_TEST_MODULE_LOG: log,
    };
    delete env.CLAWDIS_CONFIG_PATH;
    await new Promise<void>((resolve, reject) => {
      execFile(
        process.execPath,
        ["--import", "tsx", "--import", register, "--input-type=module", "-e", script],
        { cwd: repoRoot, env },
        (error, _stdout, stderr) => (error ? reject(new Error(`${error.message}\n${stderr}`)) : resolve()),
      );
    });
    const urls = (await readFile(log, "utf8")).split("\n").filter((url) => url.startsWith("file:"));
    return [...new Set(urls)].map((url) => fileURLToPath(url).slice(repoRoot.length + 1));
  }
  const runMain = (argv: string[]) =>
    `const { main } = await import(${JSON.stringify(mainUrl)}); process.exitCode = await main(${JSON.stringify(argv)});`;

  /** Packages and modules that no read-only command needs: the model client, SDKs, the config schema. */
  const heavy = [
    /^node_modules\/(openai|grammy|@grammyjs|@whiskeysockets|markdown-it|zod|json5)\//,
    /^src\/core\/config(-schema)?\.ts$/,
    /^src\/agent\//,
    /^plugins\//,
  ];
  const offending = (modules: string[], rules: RegExp[]) =>
    modules.filter((module) => rules.some((rule) => rule.test(module)));

  it("`sessions --json` and `sessions` without a config file: no config schema, model client or plugin", async () => {
    const json = await modulesLoadedBy(runMain(["sessions", "--json"]));
    expect(json).toContain("src/cli/sessions.ts");
    expect(offending(json, heavy)).toEqual([]);
    const table = await modulesLoadedBy(runMain(["sessions"]));
    expect(table).toContain("src/cli/sessions.ts");
    expect(offending(table, heavy)).toEqual([]);
  });

  it("`sessions --json` and `status` with a config file in the config cache: no config schema, zod or JSON5", async () => {
    const configured = join(dir, "configured");
    await mkdir(join(configured, "sessions"), { recursive: true });
    await writeFile(
      join(configured, "sessions", "sessions.json"),
      JSON.stringify({ main: { sessionId: "a", updatedAt: 1 } }),
    );
    // A port nothing listens on, so that `status` finds no gateway.
    const closed = createServer();
    await new Promise<void>((resolve) => closed.listen(0, "127.0.0.1", resolve));
    const { port } = closed.address() as AddressInfo;
    await new Promise<void>((resolve) => closed.close(() => resolve()));
    await writeFile(
      join(configured, "clawdis.json"),
      `{ gateway: { port: ${port} }, inbound: { reply: { agent: { model: "m" } } }, telegram: { allowFrom: [1] } }`,
    );
    const withBundleId = (argv: string[]) =>
      `const { main } = await import(${JSON.stringify(mainUrl)}); process.exitCode = await main(${JSON.stringify(argv)}, "test-bundle");`;
    // The first run validates (and loads the schema), and fills the cache.
    const first = await modulesLoadedBy(withBundleId(["sessions", "--json"]), configured);
    expect(offending(first, heavy)).toContain("src/core/config-schema.ts");
    for (const argv of [["sessions", "--json"], ["status"]]) {
      const modules = await modulesLoadedBy(withBundleId(argv), configured);
      expect(modules).toContain("src/core/config-cache.ts");
      expect(offending(modules, heavy)).toEqual([]);
    }
  });

  it("`agent -m` with its config in the config cache, in-process: no config schema, zod or JSON5", async () => {
    const model = await startFakeOpenAI();
    try {
      const configured = join(dir, "agent");
      await mkdir(join(configured, "sessions"), { recursive: true });
      await writeFile(
        join(configured, "clawdis.json"),
        `{ gateway: { port: 0 }, inbound: { reply: { agent: { baseUrl: "${model.url}", model: "m" } } } }`,
      );
      const withBundleId = (argv: string[]) =>
        `const { main } = await import(${JSON.stringify(mainUrl)}); process.exitCode = await main(${JSON.stringify(argv)}, "test-bundle");`;
      // The first run validates the file (loading the schema) and fills the cache; nothing else runs there.
      const first = await modulesLoadedBy(withBundleId(["sessions", "--json"]), configured);
      expect(offending(first, heavy)).toContain("src/core/config-schema.ts");
      // No gateway runs: the turn runs in this process, and its gateway takes the config from the cache too.
      const modules = await modulesLoadedBy(withBundleId(["agent", "-m", "hello", "--json"]), configured);
      expect(modules).toContain("src/cli/agent.ts");
      expect(modules).toContain("src/core/config-cache.ts");
      expect(model.requests.length).toBe(1);
      expect(
        offending(modules, [/^node_modules\/(zod|json5)\//, /^src\/core\/config(-schema)?\.ts$/]),
      ).toEqual([]);
    } finally {
      await model.close();
    }
  });

  it("`--version` loads no command at all", async () => {
    const modules = await modulesLoadedBy(runMain(["--version"]));
    expect(modules).toContain("src/cli/program.ts");
    // The program, its IO and the registration of plugins' commands (types and checks only): no command.
    expect(
      offending(modules, [...heavy, /^src\/cli\/(?!program|io|plugin-commands)/, /^src\/sessions\//]),
    ).toEqual([]);
  });

  it("`--help` lists the plugins' commands without loading a plugin's runtime", async () => {
    const modules = await modulesLoadedBy(runMain(["--help"]));
    expect(modules).toContain("plugins/whatsapp/cli-commands.ts");
    expect(
      offending(modules, [
        /^node_modules\/(openai|grammy|@grammyjs|@whiskeysockets)\//,
        /^src\/agent\//,
        /^plugins\/(?![^/]+\/(cli-commands|config)\.ts$)/,
      ]),
    ).toEqual([]);
  });

  it("the built-in plugins load no transport SDK before a transport is started", async () => {
    const modules = await modulesLoadedBy(
      `const { builtinPlugins } = await import(${JSON.stringify(mainUrl)}); await builtinPlugins();`,
    );
    expect(modules).toContain("plugins/telegram/index.ts");
    expect(
      offending(modules, [/^node_modules\/(openai|grammy|@grammyjs|@whiskeysockets)\//, /telegram-runtime/]),
    ).toEqual([]);
  });
});

/** A copy of bin/clawdis.js in a temp folder, with the builds it chooses from written as the test says. */
async function binLayout(files: { modules?: string; bundle?: string; cache?: Buffer }): Promise<string> {
  const root = await mkdtemp(join(tmpdir(), "clawdis-bin-"));
  await mkdir(join(root, "bin"));
  await copyFile(join(repoRoot, "bin", "clawdis.js"), join(root, "bin", "clawdis.js"));
  if (files.modules !== undefined) {
    await mkdir(join(root, "dist", "src"), { recursive: true });
    await writeFile(join(root, "dist", "src", "main.js"), files.modules);
  }
  if (files.bundle !== undefined) {
    await mkdir(join(root, "dist", "bundle"), { recursive: true });
    await writeFile(join(root, "dist", "bundle", "clawdis.cjs"), files.bundle);
    if (files.cache) await writeFile(join(root, "dist", "bundle", "clawdis.cjs.cache"), files.cache);
  }
  return root;
}

function runBin(
  root: string,
  args: string[],
  env: NodeJS.ProcessEnv = process.env,
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(process.execPath, [join(root, "bin", "clawdis.js"), ...args], { env }, (error, stdout, stderr) =>
      resolve({ code: error ? (typeof error.code === "number" ? error.code : null) : 0, stdout, stderr }),
    );
  });
}

const MODULES = `export async function main(argv) { process.stdout.write("modules " + argv.join(" ")); return 3; }\n`;

/** A bundle (as scripts/bundle.ts writes them) whose main prints `word`, then runs `body`. */
function fakeBundle(word: string, body = ""): string {
  const text = `(function (${BUNDLE_PARAMS}) {
"use strict";
exports.main = async function main(argv) { ${body} process.stdout.write("${word} " + argv.join(" ")); return 4; };
})
`;
  return text + bundleIdLine(text);
}

/**
 * The code cache of `text` after one run of its main (so that the cache holds main's code, as a trained cache
 * holds what the training ran), filed under its id as scripts/bundle-cache.ts writes it.
 */
async function cacheOf(text: string): Promise<Buffer> {
  const script = new vm.Script(text, { filename: "/x/dist/bundle/clawdis.cjs" });
  const module = { exports: {} as { main?: (argv: string[]) => Promise<number> } };
  script.runInThisContext()(
    module.exports,
    () => {},
    module,
    "",
    "",
    "file:///x/",
    async () => ({}),
  );
  const write = process.stdout.write;
  process.stdout.write = () => true;
  try {
    await module.exports.main?.([]).catch(() => {});
  } finally {
    process.stdout.write = write;
  }
  return Buffer.concat([Buffer.from(bundleId(text) ?? "", "latin1"), script.createCachedData()]);
}

describe("bin/clawdis.js: which build runs", () => {
  const roots: string[] = [];
  const layout = async (files: Parameters<typeof binLayout>[0]) => {
    const root = await binLayout(files);
    roots.push(root);
    return root;
  };
  afterAll(async () => {
    for (const root of roots) await rm(root, { recursive: true, force: true });
  });

  it("the bundle when it is at least as new as the compiled modules; its exit code is the command's", async () => {
    const root = await layout({ modules: MODULES, bundle: fakeBundle("bundle") });
    expect(await runBin(root, ["x", "y"])).toEqual({ code: 4, stdout: "bundle x y", stderr: "" });
  });

  it("the compiled modules when they are newer (a plain tsc after the bundle), or when there is no bundle", async () => {
    const stale = await layout({ modules: MODULES, bundle: fakeBundle("bundle") });
    const later = new Date(Date.now() + 60_000);
    await utimes(join(stale, "dist", "src", "main.js"), later, later);
    expect(await runBin(stale, ["a"])).toEqual({ code: 3, stdout: "modules a", stderr: "" });
    const none = await layout({ modules: MODULES });
    expect(await runBin(none, ["b"])).toEqual({ code: 3, stdout: "modules b", stderr: "" });
  });

  it("the compiled modules with --enable-source-maps (stack traces in the TypeScript files)", async () => {
    const root = await layout({ modules: MODULES, bundle: fakeBundle("bundle") });
    const env = { ...process.env, NODE_OPTIONS: "--enable-source-maps" };
    expect((await runBin(root, ["c"], env)).stdout).toBe("modules c");
  });

  it("`--version` or `-v` alone: the package's version without loading a build; anything else runs the build", async () => {
    const root = await layout({ bundle: fakeBundle("bundle") });
    await writeFile(join(root, "package.json"), JSON.stringify({ name: "clawdis", version: "9.8.7" }));
    expect(await runBin(root, ["--version"])).toEqual({ code: 0, stdout: "9.8.7\n", stderr: "" });
    expect(await runBin(root, ["-v"])).toEqual({ code: 0, stdout: "9.8.7\n", stderr: "" });
    expect(await runBin(root, ["--version", "x"])).toEqual({
      code: 4,
      stdout: "bundle --version x",
      stderr: "",
    });
    // A package.json that is not clawdis's says nothing: the program answers.
    await writeFile(join(root, "package.json"), JSON.stringify({ name: "other", version: "1.0.0" }));
    expect(await runBin(root, ["--version"])).toEqual({ code: 4, stdout: "bundle --version", stderr: "" });
  });

  it("nothing built: says how to build it, exit 1", async () => {
    const root = await layout({});
    const run = await runBin(root, ["--version"]);
    expect(run.code).toBe(1);
    expect(run.stderr).toContain("clawdis is not built yet: run `npm install`");
  });

  it("the bundle's imports from outside it work with its code cache (Node 20's import() would not)", async () => {
    const body = `const side = await __clawdisImport(new URL("./side.mjs", __importMetaUrl).href);
      const os = await __clawdisImport("node:os");
      if (side.word !== "side" || typeof os.cpus !== "function") throw new Error("import failed");`;
    const text = fakeBundle("bundle", body);
    const root = await layout({ bundle: text, cache: await cacheOf(text) });
    await writeFile(join(root, "dist", "bundle", "side.mjs"), 'export const word = "side";\n');
    expect(await runBin(root, ["d"])).toEqual({ code: 4, stdout: "bundle d", stderr: "" });
  });

  it("a package with a file of its own beside the bundle is required from it, a turn later, the same module when imported again (a failed load tried again); anything else is Node's import()", async () => {
    const body = `globalThis.mark = "before";
      const pending = __clawdisImport("pkg-a");
      globalThis.mark = "after";
      const a = await pending;
      const b = await __clawdisImport("pkg-b");
      const again = await __clawdisImport("pkg-b");
      const failed = await __clawdisImport("pkg-d").then(() => "loaded", (error) => error.message);
      const retried = await __clawdisImport("pkg-d");
      const c = await __clawdisImport("pkg-c");
      const os = await __clawdisImport("node:os");
      process.stdout.write([a.seen, a.where, typeof a.default, b.where, b.default === b.default.self, again === b, failed, retried.where, c.where, typeof os.cpus].join(",") + " ");`;
    const text = fakeBundle("bundle", body);
    const root = await layout({ bundle: text, cache: await cacheOf(text) });
    const packages = join(root, "dist", "bundle", "packages");
    await mkdir(packages);
    // An ES module compiled to CommonJS is its own namespace; a plain CommonJS module gets `default`.
    await writeFile(
      join(packages, "pkg-a.cjs"),
      'exports.__esModule = true; exports.seen = globalThis.mark; exports.where = "file"; exports.default = class {};\n',
    );
    await writeFile(join(packages, "pkg-b.cjs"), 'exports.where = "file"; exports.self = exports;\n');
    // A load that failed is tried again by the next import.
    await writeFile(
      join(packages, "pkg-d.cjs"),
      'if (!globalThis.triedD) { globalThis.triedD = true; throw new Error("first"); }\nexports.where = "second";\n',
    );
    // Without a file of its own, the package comes from node_modules.
    await mkdir(join(root, "node_modules", "pkg-c"), { recursive: true });
    await writeFile(
      join(root, "node_modules", "pkg-c", "package.json"),
      '{"name":"pkg-c","main":"index.js"}',
    );
    await writeFile(join(root, "node_modules", "pkg-c", "index.js"), 'exports.where = "node_modules";\n');
    expect(await runBin(root, ["f"])).toEqual({
      code: 4,
      stdout: "after,file,function,file,true,true,first,second,node_modules,function bundle f",
      stderr: "",
    });
  });

  it("the bundle's require takes a package's file of its own beside the bundle; anything else as Node does", async () => {
    const body = `const a = require("pkg-a");
      const c = require("pkg-c");
      const os = require("os");
      process.stdout.write([a.where, c.where, typeof os.cpus, typeof require.resolve].join(",") + " ");`;
    const text = fakeBundle("bundle", body);
    const root = await layout({ bundle: text, cache: await cacheOf(text) });
    const packages = join(root, "dist", "bundle", "packages");
    await mkdir(packages);
    await writeFile(join(packages, "pkg-a.cjs"), 'exports.where = "file";\n');
    // A package of the same name in node_modules is not the one taken while the file exists.
    for (const name of ["pkg-a", "pkg-c"]) {
      await mkdir(join(root, "node_modules", name), { recursive: true });
      await writeFile(
        join(root, "node_modules", name, "package.json"),
        `{"name":"${name}","main":"index.js"}`,
      );
      await writeFile(join(root, "node_modules", name, "index.js"), 'exports.where = "node_modules";\n');
    }
    expect(await runBin(root, ["g"])).toEqual({
      code: 4,
      stdout: "file,node_modules,function,function bundle g",
      stderr: "",
    });
  });

  it("a code cache made from another bundle of the same length is not used (V8 would run that one's code)", async () => {
    const older = fakeBundle("older");
    const newer = fakeBundle("newer");
    expect(newer.length).toBe(older.length);
    const cache = await cacheOf(older);
    const root = await layout({ bundle: newer, cache });
    expect((await runBin(root, ["e"])).stdout).toBe("newer e");
  });
});

describe("the start-up bundle (scripts/bundle.ts)", () => {
  let dir: string;
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), "clawdis-bundle-"));
  });
  afterAll(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  /** A small project: `src/main.ts` as given, an ES-module-only and a CommonJS package, the WhatsApp boundary. */
  async function project(main: string): Promise<string> {
    const root = await mkdtemp(join(dir, "project-"));
    const files: Record<string, string> = {
      "tsconfig.json": JSON.stringify({ compilerOptions: { module: "NodeNext", target: "ES2022" } }),
      "src/main.ts": main,
      "node_modules/esm-only/package.json": JSON.stringify({
        name: "esm-only",
        type: "module",
        exports: "./index.js",
      }),
      "node_modules/esm-only/index.js": "export const x = 1;\n",
      "node_modules/plain-cjs/package.json": JSON.stringify({ name: "plain-cjs", main: "index.js" }),
      "node_modules/plain-cjs/index.js": "exports.y = 2;\n",
      "plugins/whatsapp/connection.ts": 'export { x } from "esm-only";\n',
    };
    for (const [file, text] of Object.entries(files)) {
      await mkdir(dirname(join(root, file)), { recursive: true });
      await writeFile(join(root, file), text);
    }
    return root;
  }

  it.each([
    [
      'import { x } from "esm-only"; export const main = () => x;\n',
      "esm-only is an ES-module-only package imported statically by src/main.ts",
    ],
    [
      'import { y } from "plain-cjs"; export async function main() { return [y, await import("plain-cjs")]; }\n',
      "plain-cjs is imported both statically and with import() (src/main.ts)",
    ],
    [
      'import { x } from "../plugins/whatsapp/connection.js"; export const main = () => x;\n',
      "src/main.ts imports ../plugins/whatsapp/connection.js statically",
    ],
    [
      'export async function main() { return await import("commander"); }\n',
      "commander is bundled but imported with import() (src/main.ts)",
    ],
    [
      'export async function main() { return await import("zod"); }\n',
      "zod is required from a bundle of its own (REQUIRED_PACKAGES) but imported with import() (src/main.ts)",
    ],
    [
      'import OpenAI from "openai"; export const main = () => OpenAI;\n',
      "openai has a bundle of its own (PACKAGE_BUNDLES) but is imported statically (src/main.ts)",
    ],
    ["export const main = () => import.meta.dirname;\n", 'src/main.ts:1: "import.meta" is not available'],
  ])("refuses a build that would not load on Node 20: %s", async (main, problem) => {
    const root = await project(main);
    await expect(buildBundle(root)).rejects.toThrow(problem);
    await expect(readFile(join(root, "dist", "bundle", "clawdis.cjs"))).rejects.toMatchObject({
      code: "ENOENT",
    });
  });

  it("writes no bundle when a package's file of its own cannot be built (a bundle never goes without them)", async () => {
    // The small project has no `openai` installed: its file cannot be built.
    const root = await project("export const main = () => 1;\n");
    await expect(buildStartup(root)).rejects.toThrow(/openai/);
    await expect(readFile(join(root, "dist", "bundle", "clawdis.cjs"))).rejects.toMatchObject({
      code: "ENOENT",
    });
  });

  it("keeps import() lazy, ES-module-only packages and the boundary modules outside, and ends with its id", async () => {
    const root = await project(
      'export async function main() { return [await import("esm-only"), await import("../plugins/whatsapp/connection.js")]; }\n',
    );
    const text = await readFile(await buildBundle(root), "utf8");
    expect(text.startsWith(`(function (${BUNDLE_PARAMS}) {\n"use strict";`)).toBe(true);
    expect(text).toContain('__clawdisImport("esm-only")');
    expect(text).toContain(
      '__clawdisImport(new URL("../plugins/whatsapp/connection.js",__importMetaUrl).href)',
    );
    expect(text).not.toContain("import(");
    const body = text.slice(0, text.lastIndexOf("//# clawdis-bundle "));
    expect(text).toBe(body + bundleIdLine(body));
  });

  it("the real sources: commander inside, zod and JSON5 required from files of their own, a cache V8 takes, and it runs through bin", async () => {
    const root = await binLayout({});
    try {
      // The packages left outside the bundle are found from the bundle's folder, as in the checkout.
      await symlink(join(repoRoot, "node_modules"), join(root, "node_modules"));
      const bundle = await buildStartup(repoRoot, join(root, "dist", "bundle", "clawdis.cjs"));
      const text = await readFile(bundle, "utf8");
      // The id (the config cache's fingerprint) covers the validators' files: their digest is in the text.
      const validators = createHash("sha256");
      for (const name of ["zod", "json5"])
        validators.update(await readFile(packageBundlePath(dirname(bundle), name)));
      expect(text).toContain(`\n${PACKAGES_PREFIX}${validators.digest("hex")}\n//# clawdis-bundle `);
      expect(text).not.toContain('require("commander")');
      // The config file's validators are not read by every command: required, from their files, at a validation.
      for (const name of ["zod", "json5"]) expect(text).toContain(`require("${name}")`);
      expect(text).not.toContain("ZodString");
      expect(text).toContain('__clawdisImport("proper-lockfile")');
      expect(text).toContain('__clawdisImport("openai")');
      // The packages loaded after a start, each one CommonJS file of its own where bin/clawdis.js looks for it,
      // with what our sources take from it, and nothing required from it but Node's own modules.
      const files = await buildPackageBundles(repoRoot, dirname(bundle));
      const exported: Record<string, string[]> = {
        openai: ["default", "APIError", "APIConnectionError"],
        "proper-lockfile": ["lock"],
        chokidar: ["watch"],
        "eventsource-parser": ["createParser"],
        zod: ["object", "string", "ZodString"],
        json5: ["parse"],
      };
      expect(files).toEqual(
        Object.keys(exported).map((name) => join(dirname(bundle), "packages", `${name}.cjs`)),
      );
      for (const [name, names] of Object.entries(exported)) {
        const file = packageBundlePath(dirname(bundle), name);
        expect(file).toBe(join(dirname(bundle), "packages", `${name}.cjs`));
        const required = [...(await readFile(file, "utf8")).matchAll(/\brequire\("([^"]+)"\)/g)].map(
          (m) => m[1],
        );
        expect(required.filter((id) => !builtinModules.includes(id!.replace(/^node:/, "")))).toEqual([]);
        const module = createRequire(import.meta.url)(file) as Record<string, unknown>;
        for (const n of names) expect(typeof module[n], `${name}.${n}`).toBe("function");
      }
      expect(trainCache(repoRoot, bundle)).toBeUndefined();
      // The training sent messages through its gateway: the model call's own constants are in the cache (a
      // function's constants are there only when it was compiled, i.e. when the training ran it).
      const cache = (await readFile(`${bundle}.cache`)).toString("latin1");
      for (const literal of ["include_usage", "the stream ended without a finish reason"]) {
        expect(cache, literal).toContain(literal);
      }
      const version = await runBin(root, ["--version"]);
      expect(version).toEqual({ code: 0, stdout: "0.0.0\n", stderr: "" });
      const state = join(root, "state");
      await mkdir(join(state, "sessions"), { recursive: true });
      await writeFile(
        join(state, "sessions", "sessions.json"),
        JSON.stringify({ main: { sessionId: "m", updatedAt: 1 } }),
      );
      const env = { ...process.env, CLAWDIS_STATE_DIR: state, HOME: root };
      const sessions = await runBin(root, ["sessions", "--json"], env);
      expect(sessions.stderr).toBe("");
      expect(JSON.parse(sessions.stdout)).toMatchObject({
        count: 1,
        sessions: [{ key: "main", sessionId: "m" }],
      });
      // A config file not in the config cache is validated with zod and JSON5 from their files; a preload says
      // at exit where the process took them from.
      const where = join(root, "where.cjs");
      await writeFile(
        where,
        `process.on("exit", () => process.stderr.write("loaded: " + Object.keys(require.cache).filter((f) => /zod|json5/.test(f)).map((f) => f.includes("node_modules") ? "node_modules" : require("node:path").basename(f)).join(",") + "\\n"));\n`,
      );
      const traced = { ...env, NODE_OPTIONS: `--require ${where}` };
      await writeFile(join(state, "clawdis.json"), '{ inbound: { reply: { agent: { model: "m" } } } }\n');
      const validated = await runBin(root, ["sessions", "--json"], traced);
      expect(validated.code).toBe(0);
      expect(validated.stderr).toBe("loaded: json5.cjs,zod.cjs\n");
      await writeFile(join(state, "clawdis.json"), '{ inbound: { reply: { agent: { modle: "m" } } } }\n');
      const refused = await runBin(root, ["sessions", "--json"], traced);
      expect(refused.code).toBe(2);
      expect(refused.stderr).toContain(
        'inbound.reply.agent.modle: unknown key (clawdis.json line 1) — did you mean "model"?',
      );
    } finally {
      await rm(root, { recursive: true, force: true });
    }
  });
});

describe("rewriteImports (scripts/rewrite-imports.ts)", () => {
  const boundary = new Set(["/p/plugins/w/conn.ts"]);
  const where = () => "../plugins/w/conn.js";
  it.each([
    ['await import("pkg")', 'await __clawdisImport("pkg")', ["pkg"]],
    ["await import(url)", "await __clawdisImport(url)", []],
    ['await import("node:os")', 'await __clawdisImport("node:os")', ["node:os"]],
    ['await import("./inside.js")', 'await import("./inside.js")', []],
    [
      'await import("../plugins/w/conn.js")',
      'await __clawdisImport(new URL("../plugins/w/conn.js", import.meta.url).href)',
      [],
    ],
    ['const s = "import(\'pkg\')"; // import("pkg")', 'const s = "import(\'pkg\')"; // import("pkg")', []],
    ['type T = typeof import("pkg");', 'type T = typeof import("pkg");', []],
  ])("%s", (code, expected, specifiers) => {
    expect(rewriteImports("/p/src/a.ts", code, boundary, where)).toEqual({ text: expected, specifiers });
  });
});
