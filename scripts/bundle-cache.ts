import { spawnSync } from "node:child_process";
import { rmSync } from "node:fs";
import { join } from "node:path";
import { ID_PREFIX } from "./bundle-id.js";

function failure(run: ReturnType<typeof spawnSync>): string {
  const stderr = String(run.stderr ?? "")
    .trim()
    .split("\n")
    .slice(-3)
    .join(" / ");
  return `${run.error?.message ?? `exit ${run.status}`}${stderr ? `: ${stderr}` : ""}`;
}

/** Compiles the bundle with its cache the way bin/clawdis.js does; prints "taken" or why not. */
const CACHE_CHECK = `const { readFileSync } = require("node:fs");
const vm = require("node:vm");
const path = process.argv[1];
const source = readFileSync(path, "utf8");
const cache = readFileSync(path + ".cache");
const id = source.slice(source.lastIndexOf(${JSON.stringify(ID_PREFIX)}) + ${ID_PREFIX.length}).trim();
if (cache.subarray(0, id.length).toString("latin1") !== id) { console.log("not this bundle's cache"); process.exit(0); }
const script = new vm.Script(source, { filename: path, cachedData: cache.subarray(id.length) });
console.log(script.cachedDataRejected ? "rejected by V8" : "taken");`;

/**
 * Writes `<bundle>.cache` (the bundle's id, then V8's code cache) with scripts/train-bundle-cache.ts in a child
 * process with a bare environment (no token or endpoint of the builder's leaks into the run), then checks in
 * another one that V8 takes it. Returns what went wrong, if anything; a cache that is not taken is removed.
 */
export function trainCache(root: string, bundle: string): string | undefined {
  const trainer = join(root, "dist", "scripts", "train-bundle-cache.js");
  const env = { PATH: process.env.PATH ?? "" };
  // The gateway sets V8 flags once it listens (src/cli/gateway-v8.ts), which change the flag hash a code cache is
  // stamped with: made after it, the cache would be rejected by every later start. The trainer keeps V8's flags.
  const trainerEnv = { ...env, CLAWDIS_KEEP_V8_FLAGS: "1" };
  const run = spawnSync(process.execPath, [trainer, bundle], {
    env: trainerEnv,
    encoding: "utf8",
    timeout: 60_000,
  });
  if (run.status !== 0) return `training failed: ${failure(run)}`;
  const check = spawnSync(process.execPath, ["-e", CACHE_CHECK, bundle], { env, encoding: "utf8" });
  if (check.status === 0 && check.stdout.trim() === "taken") return undefined;
  rmSync(`${bundle}.cache`, { force: true });
  return `the cache is not used: ${check.stdout.trim() || failure(check)}`;
}
