/**
 * The checks of `npm test` after the build (`tsc --noCheck` and the bundle, which the end-to-end tests run):
 * every test (`vitest run`), the type-check (`tsc --noEmit`) and the lint (`biome check .`), all three at once.
 * The suite spends most of its time waiting on the processes it starts, so the type-check's half minute of CPU
 * runs beside it instead of before it.
 *
 * Contract:
 * - vitest's output streams as it comes; the type-check's and the lint's are held and printed after it, each under
 *   its own heading, so that the three never interleave;
 * - the exit code is 0 only when all three passed; otherwise 1, and the last lines say which failed;
 * - arguments are passed on to vitest (`npm test -- test/e2e/chat.test.ts`).
 */
import { spawn } from "node:child_process";
import { delimiter, dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const root = join(dirname(fileURLToPath(import.meta.url)), "..", "..");
const env = {
  ...process.env,
  PATH: `${join(root, "node_modules", ".bin")}${delimiter}${process.env.PATH ?? ""}`,
};

interface Check {
  name: string;
  code: number;
  output: string;
}

/** Runs `command`; its output streamed (`stream`) or held. Resolves with its exit code (1 when it could not start). */
function run(name: string, command: string, args: string[], stream: boolean): Promise<Check> {
  return new Promise((resolve) => {
    const child = spawn(command, args, {
      cwd: root,
      env,
      stdio: stream ? "inherit" : ["ignore", "pipe", "pipe"],
    });
    let output = "";
    child.stdout?.on("data", (chunk: Buffer) => {
      output += chunk.toString();
    });
    child.stderr?.on("data", (chunk: Buffer) => {
      output += chunk.toString();
    });
    child.on("error", (error) => resolve({ name, code: 1, output: `${output}${error.message}\n` }));
    child.on("close", (code, signal) => resolve({ name, code: code ?? (signal ? 1 : 0), output }));
  });
}

const checks = await Promise.all([
  run("tests (vitest run)", "vitest", ["run", ...process.argv.slice(2)], true),
  run("type-check (tsc --noEmit)", "tsc", ["--noEmit"], false),
  run("lint (biome check .)", "biome", ["check", "."], false),
]);
for (const check of checks.slice(1)) {
  process.stdout.write(`\n── ${check.name}: ${check.code === 0 ? "passed" : "FAILED"}\n`);
  if (check.code !== 0 || check.output.trim() !== "") process.stdout.write(check.output);
}
const failed = checks.filter((c) => c.code !== 0);
if (failed.length > 0) {
  process.stdout.write(`\nnpm test failed: ${failed.map((c) => c.name).join(", ")}\n`);
  process.exitCode = 1;
}
