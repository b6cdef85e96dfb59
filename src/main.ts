import { readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { processIO } from "./cli/io.js";
import { runCli } from "./cli/program.js";

/**
 * The composition root: the only module that knows both the core and the built-in plugins. Plugins are imported
 * only when a command needs them, so `clawdis --version` and `clawdis sessions` start fast.
 */
export function packageVersion(): string {
  let dir = dirname(fileURLToPath(import.meta.url));
  for (;;) {
    try {
      const pkg = JSON.parse(readFileSync(join(dir, "package.json"), "utf8")) as {
        name?: string;
        version?: string;
      };
      if (pkg.name === "clawdis" && pkg.version) return pkg.version;
    } catch {
      // Keep walking up.
    }
    const parent = dirname(dir);
    if (parent === dir) return "0.0.0";
    dir = parent;
  }
}

export async function main(argv: string[]): Promise<number> {
  return runCli(argv, processIO(), {
    version: packageVersion(),
    builtinPlugins: async () => [
      (await import("../plugins/webchat/index.js")).default,
      (await import("../plugins/webhook/index.js")).default,
    ],
    terminalChat: async () => (await import("../plugins/terminal/index.js")).runTerminalChat,
  });
}
