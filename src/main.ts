import { readFileSync } from "node:fs";
import { processIO } from "./cli/io.js";
import { runCli } from "./cli/program.js";

/** The composition root: the only module that knows both the core and the built-in plugins. */
export function packageVersion(): string {
  const pkg = JSON.parse(readFileSync(new URL("../../package.json", import.meta.url), "utf8")) as { version: string };
  return pkg.version;
}

export async function main(argv: string[]): Promise<number> {
  return runCli(argv, processIO(), packageVersion());
}
