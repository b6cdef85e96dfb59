import { execFileSync } from "node:child_process";
import { existsSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";

const REPO_ROOT = resolve(dirname(fileURLToPath(import.meta.url)), "../..");
const DIST_MAIN = join(REPO_ROOT, "dist", "src", "main.js");

/**
 * Vitest globalSetup: the end-to-end tests run the compiled binary (`bin/clawdis.js` → `dist/src/main.js`).
 * Builds `dist/` with `tsc --noCheck` only when it is missing: `npm test` already runs `tsc` first, and a
 * rebuild on every run would slow down every test run. After changing `src/`, rebuild before running test/e2e.
 */
export default function setup(): void {
  if (existsSync(DIST_MAIN)) return;
  const tsc = join(REPO_ROOT, "node_modules", "typescript", "bin", "tsc");
  execFileSync(process.execPath, [tsc, "--noCheck", "-p", REPO_ROOT], { cwd: REPO_ROOT, stdio: "inherit" });
}
