import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { ClawdisError } from "../core/errors.js";
import {
  loadGatewayConfig,
  loadPluginModule,
  loadPluginSections,
  resolvePluginEntry,
} from "./plugin-loader.js";

const fixtures = resolve(fileURLToPath(new URL("../../test/fixtures", import.meta.url)));

/** Runs `load` and returns the ClawdisError it throws (fails the test if it does not throw one). */
async function loadError(load: () => Promise<unknown>): Promise<ClawdisError> {
  try {
    await load();
  } catch (error) {
    expect(error).toBeInstanceOf(ClawdisError);
    return error as ClawdisError;
  }
  throw new Error("expected the load to fail");
}

const pluginSource = (id: string) =>
  `export default { apiVersion: 1, id: ${JSON.stringify(id)}, create() { return {}; } };\n`;

async function writePackage(root: string, name: string, id: string): Promise<void> {
  const dir = join(root, "node_modules", name);
  await mkdir(dir, { recursive: true });
  await writeFile(
    join(dir, "package.json"),
    JSON.stringify({
      name,
      type: "module",
      exports: { ".": { import: "./main.js" }, "./extra": "./extra.js" },
    }),
  );
  await writeFile(join(dir, "main.js"), pluginSource(id));
  await writeFile(join(dir, "extra.js"), pluginSource(`${id}-extra`));
}

describe("loadPluginModule: folders", () => {
  it("imports package.json main, adding .js to a main without extension", async () => {
    const definition = await loadPluginModule("./plugins/folder-main", fixtures);
    expect(definition.id).toBe("folder-main");
    expect(definition.version).toBe("1.2.3");
    expect(typeof definition.create).toBe("function");
  });

  it("prefers exports (import condition) over main and require", async () => {
    const definition = await loadPluginModule("./plugins/folder-exports", fixtures);
    expect(definition.id).toBe("folder-exports");
  });

  it("falls back to index.js, and accepts a bare relative folder and an absolute one", async () => {
    expect((await loadPluginModule("plugins/index-only", fixtures)).id).toBe("index-only");
    expect((await loadPluginModule(join(fixtures, "plugins/index-only"), "/nonexistent")).id).toBe(
      "index-only",
    );
  });

  it("loads the echo fixture plugin", async () => {
    const definition = await loadPluginModule("./echo-plugin", fixtures);
    expect(definition.id).toBe("echo-transport");
    expect(definition.apiVersion).toBe(2);
    expect(definition.configSection?.key).toBe("echo");
  });

  it("names the spec and the missing path when the folder does not exist", async () => {
    const error = await loadError(() => loadPluginModule("./plugins/nope", fixtures));
    expect(error.code).toBe("PLUGIN_INVALID");
    expect(error.message).toContain('Plugin "./plugins/nope"');
    expect(error.message).toContain(join(fixtures, "plugins/nope"));
    expect(error.message).toContain("does not exist");
  });

  it("says which entry files it looked for in a folder without one", async () => {
    const error = await loadError(() => loadPluginModule("./plugins", fixtures));
    expect(error.code).toBe("PLUGIN_INVALID");
    expect(error.message).toContain("has no entry point");
    expect(error.message).toContain(join(fixtures, "plugins", "index.js"));
  });

  it("reports exports that point to a missing file", async () => {
    const error = await loadError(() => loadPluginModule("./plugins/exports-missing", fixtures));
    expect(error.message).toContain("exports");
    expect(error.message).toContain(join(fixtures, "plugins/exports-missing/dist/index.js"));
  });
});

describe("loadPluginModule: invalid modules", () => {
  it("rejects a module without a default export", async () => {
    const error = await loadError(() => loadPluginModule("./plugins/no-default", fixtures));
    expect(error.code).toBe("PLUGIN_INVALID");
    expect(error.message).toContain('Plugin "./plugins/no-default"');
    expect(error.message).toContain("has no default export");
  });

  it("names the API version the plugin wants and the one the gateway speaks", async () => {
    const error = await loadError(() => loadPluginModule("./plugins/wrong-api", fixtures));
    expect(error.code).toBe("PLUGIN_INVALID");
    expect(error.message).toContain("plugin API version 99");
    expect(error.message).toContain("this gateway speaks versions 1 and 2");
    expect(error.message).toContain("update clawdis");
  });

  it("lists every problem of a malformed definition", async () => {
    const error = await loadError(() => loadPluginModule("./plugins/bad-shape", fixtures));
    expect(error.message).toContain('id "Bad_Id" is not 1-64 lowercase letters, digits and dashes');
    expect(error.message).toContain("create is missing");
    expect(error.message).toContain("sendThread must be true or false");
  });

  it("wraps an error thrown while importing, keeping the cause", async () => {
    const error = await loadError(() => loadPluginModule("./plugins/throws-on-import", fixtures));
    expect(error.code).toBe("PLUGIN_INVALID");
    expect(error.message).toContain("cannot reach the fixture service");
    expect((error.cause as Error).message).toBe("cannot reach the fixture service");
  });
});

describe("loadPluginModule: packages, ~ and files", () => {
  let root: string;
  beforeEach(async () => {
    root = await mkdtemp(join(tmpdir(), "clawdis-loader-"));
  });
  afterEach(async () => {
    await rm(root, { recursive: true, force: true });
  });

  it("resolves a package from node_modules next to the config, scoped or not, with a subpath", async () => {
    await writePackage(root, "clawdis-plugin-sample", "sample");
    await writePackage(root, "@acme/clawdis-plugin", "acme");
    const base = join(root, "config-dir");
    await mkdir(base);
    expect((await loadPluginModule("clawdis-plugin-sample", base)).id).toBe("sample");
    expect((await loadPluginModule("@acme/clawdis-plugin", base)).id).toBe("acme");
    expect((await loadPluginModule("clawdis-plugin-sample/extra", base)).id).toBe("sample-extra");
  });

  it("resolves a package from clawdis's own node_modules (zod is no plugin)", async () => {
    const error = await loadError(() => loadPluginModule("zod", root));
    expect(error.code).toBe("PLUGIN_INVALID");
    expect(error.message).toContain(join("node_modules", "zod"));
    expect(error.message).toContain("apiVersion is missing");
  });

  it("says how to install a package that is not there", async () => {
    const error = await loadError(() => loadPluginModule("clawdis-plugin-absent", root));
    expect(error.code).toBe("PLUGIN_INVALID");
    expect(error.message).toContain('no package "clawdis-plugin-absent"');
    expect(error.message).toContain("npm install clawdis-plugin-absent");
  });

  it("expands ~ against HOME", async () => {
    const dir = join(root, "my-plugins", "tilde");
    await mkdir(dir, { recursive: true });
    await writeFile(join(dir, "package.json"), JSON.stringify({ type: "module" }));
    await writeFile(join(dir, "index.js"), pluginSource("tilde"));
    const definition = await loadPluginModule("~/my-plugins/tilde", "/nonexistent", { HOME: root });
    expect(definition.id).toBe("tilde");
  });

  it("imports a file spec directly", async () => {
    await writeFile(join(root, "single.mjs"), pluginSource("single-file"));
    expect((await loadPluginModule("./single.mjs", root)).id).toBe("single-file");
  });

  it("loads a CommonJS plugin (module.exports is the default export)", async () => {
    const dir = join(root, "commonjs");
    await mkdir(dir);
    await writeFile(join(dir, "package.json"), JSON.stringify({ main: "plugin.cjs" }));
    await writeFile(
      join(dir, "plugin.cjs"),
      "module.exports = { apiVersion: 1, id: 'commonjs', create() { return {}; } };\n",
    );
    expect((await loadPluginModule("./commonjs", root)).id).toBe("commonjs");
  });

  it("reports a package.json that does not parse", async () => {
    const dir = join(root, "broken-json");
    await mkdir(dir);
    await writeFile(join(dir, "package.json"), "{ nope");
    expect(() => resolvePluginEntry("./broken-json", root)).toThrow(/package\.json does not parse/);
  });
});

describe("loadPluginSections / loadGatewayConfig", () => {
  let root: string;
  beforeEach(async () => {
    root = await mkdtemp(join(tmpdir(), "clawdis-sections-"));
  });
  afterEach(async () => {
    await rm(root, { recursive: true, force: true });
  });

  it("gives the sections of the plugins that declare one, owned by their id, in order", async () => {
    const entries = await loadPluginSections(["./echo-plugin", "./plugins/index-only"], fixtures);
    expect(entries.map((entry) => [entry.owner, entry.section.key])).toEqual([["echo-transport", "echo"]]);
  });

  it("loads plugins.load relative to the config file and checks their sections with the rest", async () => {
    const echo = join(fixtures, "echo-plugin");
    const env = { CLAWDIS_STATE_DIR: root, HOME: root };
    await writeFile(
      join(root, "clawdis.json"),
      JSON.stringify({ plugins: { load: [echo] }, echo: { allowFrom: ["alice"] } }),
    );
    const loaded = await loadGatewayConfig(env, []);
    expect((loaded.config as Record<string, unknown>).echo).toEqual({
      allowFrom: ["alice"],
      maxTextLength: 4000,
      holdStart: false,
    });
    await writeFile(
      join(root, "clawdis.json"),
      JSON.stringify({ plugins: { load: [echo] }, echo: { allow: [] } }),
    );
    await expect(loadGatewayConfig(env, [])).rejects.toThrow("echo.allow: unknown key (clawdis.json line 1)");
  });

  it("stops with the loader's error when a plugin of plugins.load does not load", async () => {
    const env = { CLAWDIS_STATE_DIR: root, HOME: root };
    await writeFile(join(root, "clawdis.json"), JSON.stringify({ plugins: { load: ["./nope"] } }));
    const error = await loadError(() => loadGatewayConfig(env, []));
    expect(error.code).toBe("PLUGIN_INVALID");
    expect(error.message).toContain(join(root, "nope"));
  });
});
