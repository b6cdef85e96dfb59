import { readdirSync, readFileSync, statSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";

/**
 * The dependency rules of ARCHITECTURE.md, checked on the source:
 * - core (`src/`) never imports `plugins/`, except the composition root `src/main.ts`;
 * - a plugin imports only `src/plugin-api/`, its own folder and packages (its SDK);
 * - only `src/agent/llm-client.ts` imports `openai`.
 */
const root = resolve(dirname(fileURLToPath(import.meta.url)), "..");

function sourceFiles(dir: string): string[] {
  const out: string[] = [];
  for (const name of readdirSync(dir)) {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) out.push(...sourceFiles(path));
    else if (name.endsWith(".ts") && !name.endsWith(".test.ts")) out.push(path);
  }
  return out;
}

function importsOf(file: string): string[] {
  const text = readFileSync(file, "utf8");
  const specs: string[] = [];
  for (const match of text.matchAll(
    /(?:import|export)\s[^'"]*?from\s+["']([^"']+)["']|import\(\s*["']([^"']+)["']\s*\)/g,
  )) {
    specs.push((match[1] ?? match[2])!);
  }
  return specs;
}

function resolved(file: string, spec: string): string | undefined {
  if (!spec.startsWith(".")) return undefined;
  return relative(root, resolve(dirname(file), spec));
}

describe("architecture", () => {
  it("core never imports a plugin, except src/main.ts", () => {
    const offenders: string[] = [];
    for (const file of sourceFiles(join(root, "src"))) {
      if (relative(root, file) === join("src", "main.ts")) continue;
      for (const spec of importsOf(file)) {
        const target = resolved(file, spec);
        if (target?.startsWith("plugins")) offenders.push(`${relative(root, file)} imports ${spec}`);
      }
    }
    expect(offenders).toEqual([]);
  });

  it("plugins import only the plugin API, their own folder and packages", () => {
    const offenders: string[] = [];
    for (const pluginDir of readdirSync(join(root, "plugins"))) {
      const base = join("plugins", pluginDir);
      for (const file of sourceFiles(join(root, base))) {
        for (const spec of importsOf(file)) {
          const target = resolved(file, spec);
          if (target === undefined) continue;
          const ok = target.startsWith(base) || target.startsWith(join("src", "plugin-api"));
          if (!ok) offenders.push(`${relative(root, file)} imports ${spec}`);
        }
      }
    }
    expect(offenders).toEqual([]);
  });

  it("only the llm client imports the openai SDK", () => {
    const importers = [...sourceFiles(join(root, "src")), ...sourceFiles(join(root, "plugins"))]
      .filter((file) => importsOf(file).some((spec) => spec === "openai" || spec.startsWith("openai/")))
      .map((file) => relative(root, file));
    expect(importers).toEqual([join("src", "agent", "llm-client.ts")]);
  });

  it("the checks see real imports (a sanity check of the scanner)", () => {
    expect(importsOf(join(root, "src", "main.ts"))).toContain("./cli/program.js");
  });
});
