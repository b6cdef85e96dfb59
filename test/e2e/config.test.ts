import { existsSync } from "node:fs";
import { readdir, readFile, stat, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { afterEach, describe, expect, it } from "vitest";
import { cleanupAll, E2eState, type Json } from "./harness.js";

/**
 * The harness's config with the echo plugin's settings in its own section, `echo` (where a plugin with a section
 * takes them), merged with `extra` (top-level keys replaced).
 */
function sectionConfig(state: E2eState, extra: Json = {}): Json {
  const base = state.configFor();
  const plugins = { ...(base.plugins as Json) };
  const entries = { ...((plugins.entries as Json | undefined) ?? {}) };
  delete entries["echo-transport"];
  return { ...base, plugins: { ...plugins, entries }, echo: { allowFrom: ["alice", "bob"] }, ...extra };
}

describe("e2e: a bad config stops the start", () => {
  afterEach(cleanupAll);

  it("`clawdis gateway` exits 2 and names the key when idleMinutes is not a number", async () => {
    const state = await E2eState.create({
      config: { inbound: { reply: { session: { idleMinutes: "soon" } } } },
    });
    const written = await readFile(state.configPath, "utf8");
    const run = await state.cli(["gateway"]);
    expect(run.code, run.stderr).toBe(2);
    expect(run.stderr).toContain("inbound.reply.session.idleMinutes");
    expect(run.stderr).not.toMatch(/listening on/);
    expect(run.stdout).toBe("");
    // Nothing was started: no address file, and the config was not replaced by defaults.
    expect(existsSync(join(state.dir, "gateway.json"))).toBe(false);
    expect(state.fake.requests).toHaveLength(0);
    expect(await readFile(state.configPath, "utf8")).toBe(written);
  });

  it("`clawdis gateway` exits 2 and names the key and both lines when a key is written twice", async () => {
    const state = await E2eState.create();
    // The harness's own config, with gateway.port written a second time right after its first occurrence.
    const base = JSON.stringify(state.configFor(), null, 2);
    const text = base.replace(/"port": (\d+),/, '"port": $1,\n    "port": 1,');
    expect(text).not.toBe(base);
    await state.writeConfig(text);
    const first = text.split("\n").findIndex((line) => line.includes('"port"')) + 1;
    const run = await state.cli(["gateway"]);
    expect(run.code, run.stderr).toBe(2);
    expect(run.stderr).toContain(
      `gateway.port: duplicate key (clawdis.json line ${first + 1}; also line ${first}) — only the last one would count: keep one`,
    );
    expect(run.stderr).not.toMatch(/listening on|\n\s+at /);
    expect(existsSync(join(state.dir, "gateway.json"))).toBe(false);
    expect(await readFile(state.configPath, "utf8")).toBe(text);
  });
});

describe("e2e: config sections owned by plugins", () => {
  afterEach(cleanupAll);

  it("a misspelled key in a built-in plugin's section stops the start: exit 2, full path, line, did you mean", async () => {
    const state = await E2eState.create();
    const text = JSON.stringify(sectionConfig(state, { telegram: { botTokn: "1:x" } }), null, 2);
    await state.writeConfig(text);
    const line = text.split("\n").findIndex((row) => row.includes('"botTokn"')) + 1;
    const run = await state.cli(["gateway"]);
    expect(run.code, run.stderr).toBe(2);
    expect(run.stderr).toContain(
      `telegram.botTokn: unknown key (clawdis.json line ${line}) — did you mean "botToken"?`,
    );
    expect(existsSync(join(state.dir, "gateway.json"))).toBe(false);
  });

  it("a misspelled key in the section of a plugin from plugins.load stops the start the same way", async () => {
    const state = await E2eState.create();
    const text = JSON.stringify(sectionConfig(state, { echo: { allowFrm: ["alice"] } }), null, 2);
    await state.writeConfig(text);
    const line = text.split("\n").findIndex((row) => row.includes('"allowFrm"')) + 1;
    const run = await state.cli(["gateway"]);
    expect(run.code, run.stderr).toBe(2);
    expect(run.stderr).toContain(
      `echo.allowFrm: unknown key (clawdis.json line ${line}) — did you mean "allowFrom"?`,
    );
    expect(state.fake.requests).toHaveLength(0);
  });

  it("read-only commands accept an external plugin's section unchecked, and load no model client or plugin code", async () => {
    const state = await E2eState.create();
    // A typo in the external section: the gateway would refuse it; read-only commands do not load the plugin.
    await state.writeConfig(sectionConfig(state, { echo: { allowFrm: ["alice"] }, webhooks: { ci: {} } }));
    const log = join(state.dir, "loaded.txt");
    const hooks = join(state.dir, "hooks.mjs");
    const register = join(state.dir, "register.mjs");
    await writeFile(
      hooks,
      'import { appendFileSync } from "node:fs";\n' +
        "export async function load(url, context, next) {\n" +
        '  appendFileSync(process.env.E2E_LOADED_LOG, url + "\\n");\n' +
        "  return next(url, context);\n}\n",
    );
    await writeFile(
      register,
      `import { register } from "node:module";\nregister(${JSON.stringify(pathToFileURL(hooks).href)});\n`,
    );
    // --enable-source-maps makes bin/clawdis.js run the compiled modules, which the hook sees (inside the start-up
    // bundle there is no module to see).
    const env = {
      NODE_OPTIONS: `--enable-source-maps --import=${pathToFileURL(register).href}`,
      E2E_LOADED_LOG: log,
    };
    for (const args of [["sessions", "--json"], ["status", "--json"], ["doctor"]]) {
      await writeFile(log, "");
      const run = await state.cli(args, undefined, { env });
      // doctor's exit code also reflects findings that are not about the config (file modes…); its config line counts.
      if (args[0] === "doctor") expect(run.stdout).toMatch(/^✓ config .* is valid$/m);
      else expect(run.code, `${args.join(" ")}: ${run.stderr}`).toBe(0);
      const loaded = (await readFile(log, "utf8")).split("\n").filter(Boolean);
      expect(
        loaded.some((url) => url.endsWith("/src/core/config.js")),
        args.join(" "),
      ).toBe(true);
      expect(
        loaded.some((url) => url.endsWith("/plugins/webhook/config.js")),
        args.join(" "),
      ).toBe(true);
      const heavy = loaded.filter(
        (url) =>
          url.includes("/node_modules/openai/") ||
          url.endsWith("/src/agent/llm-client.js") ||
          /\/plugins\/[^/]+\/(?!config(-schema)?\.js$)[^/]+$/.test(url) ||
          url.includes("/echo-plugin/"),
      );
      expect(heavy, args.join(" ")).toEqual([]);
      if (args[0] === "doctor") {
        expect(run.stdout).toContain(
          '- config key "echo" not checked: no built-in plugin owns it, so it may be the section of a plugin in plugins.load',
        );
      }
    }
  });
});

describe("e2e: the config cache of read-only commands", () => {
  afterEach(cleanupAll);

  it("`sessions --json` fills it (0600); an edit the schema refuses is refused with it warm, exit 2 and the key", async () => {
    const state = await E2eState.create();
    const good = await readFile(state.configPath, "utf8");
    const first = await state.cli(["sessions", "--json"]);
    expect(first.code, first.stderr).toBe(0);
    const cache = join(state.dir, "cache");
    const names = await readdir(cache);
    expect(names).toEqual([expect.stringMatching(/^config\.[0-9a-f]{64}\.json$/)]);
    expect((await stat(join(cache, names[0] ?? ""))).mode & 0o777).toBe(0o600);

    const bad = JSON.stringify({
      ...(JSON.parse(good) as Json),
      inbound: { reply: { session: { idleMinutes: "soon" } } },
    });
    await state.writeConfig(bad);
    for (const args of [["sessions", "--json"], ["status"]]) {
      const run = await state.cli(args);
      expect(run.code, run.stderr).toBe(2);
      expect(run.stderr).toContain("inbound.reply.session.idleMinutes");
    }
    // The refused file left no entry; the good one, written back, is the cached one again.
    expect(await readdir(cache)).toEqual(names);
    await state.writeConfig(good);
    const again = await state.cli(["sessions", "--json"]);
    expect(again.code, again.stderr).toBe(0);
    expect(again.stdout).toBe(first.stdout);
  });
});
