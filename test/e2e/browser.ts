import { existsSync } from "node:fs";
import { mkdtemp, readFile, rename, rm } from "node:fs/promises";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import sparticuz from "@sparticuz/chromium";
import { type Browser, chromium } from "playwright-core";

/** Debian's Chromium (`apt install chromium`); used when present because it is already unpacked. */
export const SYSTEM_CHROMIUM = "/usr/bin/chromium";

/** The flags every browser of the suite runs with, whichever binary it is. */
export const BROWSER_FLAGS = [
  "--headless",
  "--no-sandbox",
  "--disable-gpu",
  "--disable-background-networking",
];

export type BrowserChoice =
  | { source: "E2E_CHROMIUM" | "system"; executablePath: string }
  | { source: "packaged" };

/**
 * Which Chromium the browser tests drive. Pure. In order: `E2E_CHROMIUM` when set (a path that does not exist
 * is an error, never a silent fallback), else Debian's `/usr/bin/chromium` when present, else the Chromium that
 * `@sparticuz/chromium` ships inside its npm package (so `npm install && npm test` needs nothing else).
 * Never a download, never a skip.
 */
export function chooseBrowser(env: NodeJS.ProcessEnv, exists: (path: string) => boolean): BrowserChoice {
  const override = env.E2E_CHROMIUM;
  if (override !== undefined && override.length > 0) {
    if (!exists(override)) {
      throw new Error(`E2E_CHROMIUM=${override} does not exist: point it at a Chromium binary, or unset it`);
    }
    return { source: "E2E_CHROMIUM", executablePath: override };
  }
  if (exists(SYSTEM_CHROMIUM)) return { source: "system", executablePath: SYSTEM_CHROMIUM };
  return { source: "packaged" };
}

/**
 * The version of `@sparticuz/chromium` installed in node_modules (it names the unpacked folder): read from the
 * package's own `package.json`, the first one above its entry file that names the package (the entry sits in
 * `build/` or `build/cjs/` depending on the version).
 */
export async function packagedVersion(): Promise<string> {
  const name = "@sparticuz/chromium";
  let dir = dirname(createRequire(import.meta.url).resolve(name));
  for (;;) {
    const manifest = await readManifest(join(dir, "package.json"));
    if (manifest?.name === name) {
      if (typeof manifest.version !== "string") {
        throw new Error(`${name} has no version in ${dir}/package.json`);
      }
      return manifest.version;
    }
    const parent = dirname(dir);
    if (parent === dir) throw new Error(`${name}: no package.json naming it above its entry file`);
    dir = parent;
  }
}

/** A `package.json`'s name and version, or undefined when there is none at that path. */
async function readManifest(path: string): Promise<{ name?: unknown; version?: unknown } | undefined> {
  const text = await readFile(path, "utf8").catch((error: NodeJS.ErrnoException) => {
    if (error.code === "ENOENT") return undefined;
    throw error;
  });
  return text === undefined ? undefined : (JSON.parse(text) as { name?: unknown; version?: unknown });
}

/**
 * Unpacks the packaged Chromium once into `<root>/clawdis-chromium-<version>/` and returns its binary.
 * The library unpacks into `os.tmpdir()` and takes any `chromium` file there as done, so a run killed halfway
 * would leave a broken binary for every later run; here it unpacks into a fresh private folder (by pointing
 * `TMPDIR` at it while the library computes its paths, which it does before its first await), then renames the
 * folder into place: the final folder exists only complete, and two runs racing both end with a whole copy.
 */
export async function unpackPackagedChromium(root: string = tmpdir()): Promise<string> {
  const target = join(root, `clawdis-chromium-${await packagedVersion()}`);
  const binary = join(target, "chromium");
  if (existsSync(binary)) return binary;
  const scratch = await mkdtemp(join(root, "clawdis-chromium-unpack-"));
  const saved = process.env.TMPDIR;
  let unpacked: Promise<string>;
  process.env.TMPDIR = scratch;
  try {
    unpacked = sparticuz.executablePath();
  } finally {
    if (saved === undefined) delete process.env.TMPDIR;
    else process.env.TMPDIR = saved;
  }
  try {
    const path = await unpacked;
    if (path !== join(scratch, "chromium")) {
      throw new Error(`@sparticuz/chromium unpacked to ${path}, not into ${scratch}: check its version`);
    }
    await rename(scratch, target).catch((error: NodeJS.ErrnoException) => {
      // Another run renamed its complete copy into place first: use that one.
      if (!existsSync(binary)) throw error;
    });
  } finally {
    await rm(scratch, { recursive: true, force: true });
  }
  return binary;
}

/** Starts the browser `chooseBrowser` picks, headless. */
export async function launchBrowser(): Promise<Browser> {
  const choice = chooseBrowser(process.env, existsSync);
  const executablePath =
    choice.source === "packaged" ? await unpackPackagedChromium() : choice.executablePath;
  return chromium.launch({ executablePath, headless: true, args: BROWSER_FLAGS });
}
