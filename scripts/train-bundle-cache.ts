/**
 * `node dist/scripts/train-bundle-cache.js <bundle>` (run by scripts/bundle.ts in a child process with a bare
 * environment): loads the bundle exactly as bin/clawdis.js does, runs what a start needs — `--version`,
 * `sessions --json` and `sessions` on a small store, `gateway` until it listens (on 127.0.0.1, port 0, a model
 * endpoint on a closed local port: nothing leaves the machine) — then writes `<bundle>.cache`: the bundle's id
 * followed by V8's code cache, which now holds the functions those runs compiled. Exits 0 once written.
 */
import { existsSync, watch } from "node:fs";
import { mkdir, mkdtemp, readFile, rename, rm, writeFile } from "node:fs/promises";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { pathToFileURL } from "node:url";
import vm from "node:vm";
import { bundleId } from "./bundle-id.js";

type Main = (argv: string[]) => Promise<number>;

async function train(bundle: string): Promise<void> {
  const source = await readFile(bundle, "utf8");
  const id = bundleId(source);
  if (!id) throw new Error(`${bundle} has no id line`);
  const script = new vm.Script(source, { filename: bundle });
  const module = { exports: {} as { main?: Main } };
  script.runInThisContext()(
    module.exports,
    createRequire(bundle),
    module,
    bundle,
    dirname(bundle),
    pathToFileURL(bundle).href,
    (specifier: string) => import(specifier),
  );
  const main = module.exports.main;
  if (!main) throw new Error(`${bundle} exports no main`);

  const state = await mkdtemp(join(tmpdir(), "clawdis-train-"));
  try {
    process.env.CLAWDIS_STATE_DIR = state;
    process.env.HOME = state;
    const expect = async (argv: string[], code = 0) => {
      const got = await main(argv);
      if (got !== code) throw new Error(`clawdis ${argv.join(" ")} exited ${got}`);
    };
    await expect(["--version"]);
    await mkdir(join(state, "sessions"));
    const now = Date.now();
    const store = Object.fromEntries(
      Array.from({ length: 20 }, (_, n) => [`group:${n}`, { sessionId: `s${n}`, updatedAt: now - n }]),
    );
    await writeFile(join(state, "sessions", "sessions.json"), JSON.stringify(store, null, 2));
    await expect(["sessions", "--json"]);
    await expect(["sessions"]);

    await writeFile(
      join(state, "clawdis.json"),
      JSON.stringify({
        gateway: { port: 0 },
        inbound: { reply: { agent: { baseUrl: "http://127.0.0.1:9/v1", model: "train" } } },
      }),
    );
    const address = join(state, "gateway.json");
    const listening = new Promise<void>((resolve) => {
      const watcher = watch(state, () => {
        if (existsSync(address)) {
          watcher.close();
          resolve();
        }
      });
    });
    const gateway = main(["gateway"]);
    const first = await Promise.race([listening.then(() => "listening"), gateway]);
    if (first !== "listening") throw new Error(`clawdis gateway exited ${first} before it listened`);
    const cache = Buffer.concat([Buffer.from(id, "latin1"), script.createCachedData()]);
    const tmp = `${bundle}.cache.tmp-${process.pid}`;
    await writeFile(tmp, cache);
    await rename(tmp, `${bundle}.cache`);
    // A graceful stop (the gateway's own signal handler) before the state directory goes.
    process.kill(process.pid, "SIGTERM");
    await gateway;
  } finally {
    await rm(state, { recursive: true, force: true });
  }
}

train(process.argv[2] ?? "").then(
  () => process.exit(0),
  (error: unknown) => {
    process.stderr.write(`train-bundle-cache: ${error instanceof Error ? error.message : String(error)}\n`);
    process.exit(1);
  },
);
