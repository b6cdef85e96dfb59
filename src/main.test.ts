import { execFile } from "node:child_process";
import { mkdir, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { validateConfigText } from "./core/config.js";
import { builtinConfigSections, builtinPlugins } from "./main.js";

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
  const repoRoot = join(dirname(fileURLToPath(import.meta.url)), "..");
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

  async function modulesLoadedBy(script: string): Promise<string[]> {
    const log = join(dir, `modules-${Math.random().toString(36).slice(2)}.txt`);
    const register = `data:text/javascript,import{register}from"node:module";register(${JSON.stringify(pathToFileURL(join(dir, "hook.mjs")).href)});`;
    const env: NodeJS.ProcessEnv = {
      ...process.env,
      CLAWDIS_STATE_DIR: state,
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

  it("`--version` loads no command at all", async () => {
    const modules = await modulesLoadedBy(runMain(["--version"]));
    expect(modules).toContain("src/cli/program.ts");
    expect(offending(modules, [...heavy, /^src\/cli\/(?!program|io)/, /^src\/sessions\//])).toEqual([]);
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
