/**
 * `node dist/scripts/train-bundle-cache.js <bundle>` (run by scripts/bundle.ts in a child process with a bare
 * environment): loads the bundle exactly as bin/clawdis.js does, runs what a start needs — `--version`,
 * `sessions --json` and `sessions` on a small store, `gateway` until it listens (on 127.0.0.1, port 0) — then what
 * nearly every gateway does next: messages over `POST /api/agent` (two to `main`, one to a group), each answered
 * by a streamed completion of a model endpoint this process serves on 127.0.0.1 (`trainingModel`: nothing leaves
 * the machine), and a graceful stop. Then it writes `<bundle>.cache`: the bundle's id followed by V8's code cache,
 * which now holds the functions those runs compiled, so a gateway's first messages and its stop do not compile
 * them again. Exits 0 once written.
 *
 * The runs find their config file in the config cache (core/config-cache.ts), as nearly every start does: a child
 * process (`<bundle> --fill-config-cache <state>`) validates it first. So the config schema and zod (40 % of the
 * bundle's text) are never compiled here and their code is not in the cache, which every start deserializes: a
 * start that has to validate (its config file changed) compiles them then.
 */

import { spawnSync } from "node:child_process";
import { existsSync, watch } from "node:fs";
import { mkdir, mkdtemp, readdir, readFile, rename, rm, stat, writeFile } from "node:fs/promises";
import { createServer, request, type Server } from "node:http";
import { createRequire } from "node:module";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import vm from "node:vm";
import { bundleId } from "./bundle-id.js";

/** src/main.ts `main`: the bundle's id is the config cache's schema fingerprint, as bin/clawdis.js hands it in. */
type Main = (argv: string[], bundleId?: string) => Promise<number>;

/** The bundle loaded as bin/clawdis.js loads it: its compiled script (for its cache), id and `main`. */
async function loadBundle(bundle: string): Promise<{ script: vm.Script; id: string; main: Main }> {
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
  return { script, id, main };
}

function useState(state: string): void {
  process.env.CLAWDIS_STATE_DIR = state;
  process.env.HOME = state;
}

/** The child's part: validates the config file of `state` once, which puts it in the config cache. */
async function fillConfigCache(bundle: string, state: string): Promise<void> {
  const { main, id } = await loadBundle(bundle);
  useState(state);
  const code = await main(["sessions", "--json"], id);
  if (code !== 0) throw new Error(`clawdis sessions --json exited ${code} while filling the config cache`);
}

/** The config cache's one entry in `state` as name, inode and modification time; throws when there is none. */
async function configCacheEntry(state: string): Promise<string> {
  const dir = join(state, "cache");
  const names = (await readdir(dir).catch(() => [])).filter((name) => name.startsWith("config."));
  if (names.length !== 1) throw new Error(`${dir} holds ${names.length} config cache entries, not 1`);
  const info = await stat(join(dir, names[0]!), { bigint: true });
  return `${names[0]} ${info.ino} ${info.mtimeNs}`;
}

/**
 * The model endpoint of the training run, on 127.0.0.1: every chat completion is answered as a stream (a role
 * chunk, two content chunks, the finish and the usage, then `[DONE]`), the model list with one model.
 */
async function trainingModel(): Promise<{ server: Server; baseUrl: string }> {
  const server = createServer((req, res) => {
    req.resume();
    req.on("end", () => {
      if (req.url?.endsWith("/models")) {
        res.writeHead(200, { "content-type": "application/json" });
        res.end(JSON.stringify({ object: "list", data: [{ id: "train", object: "model" }] }));
        return;
      }
      const chunk = (delta: object, finish: string | null = null, usage?: object) =>
        `data: ${JSON.stringify({
          id: "c",
          object: "chat.completion.chunk",
          created: 0,
          model: "train",
          choices: usage ? [] : [{ index: 0, delta, finish_reason: finish }],
          ...(usage ? { usage } : {}),
        })}\n\n`;
      res.writeHead(200, { "content-type": "text/event-stream" });
      res.write(chunk({ role: "assistant", content: "" }));
      res.write(chunk({ content: "trained " }));
      res.write(chunk({ content: "reply" }));
      res.write(chunk({}, "stop"));
      res.write(chunk({}, null, { prompt_tokens: 10, completion_tokens: 2, total_tokens: 12 }));
      res.end("data: [DONE]\n\n");
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return { server, baseUrl: `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1` };
}

/** One message over the gateway's API; resolves with the answer's text, rejects unless it is a 200. */
function postMessage(
  gateway: { url: string; token: string },
  message: string,
  session: string,
): Promise<string> {
  const target = new URL("/api/agent", gateway.url);
  const body = JSON.stringify({ message, session });
  return new Promise((resolve, reject) => {
    const req = request(
      {
        host: target.hostname,
        port: target.port,
        path: target.pathname,
        method: "POST",
        headers: {
          authorization: `Bearer ${gateway.token}`,
          "content-type": "application/json",
          "content-length": Buffer.byteLength(body),
        },
      },
      (res) => {
        let text = "";
        res.setEncoding("utf8");
        res.on("data", (part: string) => {
          text += part;
        });
        res.on("end", () =>
          res.statusCode === 200
            ? resolve(text)
            : reject(new Error(`POST /api/agent: ${res.statusCode} ${text}`)),
        );
        res.on("error", reject);
      },
    );
    req.on("error", reject);
    req.end(body);
  });
}

async function train(bundle: string): Promise<void> {
  const state = await mkdtemp(join(tmpdir(), "clawdis-train-"));
  const model = await trainingModel();
  try {
    await mkdir(join(state, "sessions"));
    const now = Date.now();
    const store = Object.fromEntries(
      Array.from({ length: 20 }, (_, n) => [`group:${n}`, { sessionId: `s${n}`, updatedAt: now - n }]),
    );
    await writeFile(join(state, "sessions", "sessions.json"), JSON.stringify(store, null, 2));
    await writeFile(
      join(state, "clawdis.json"),
      JSON.stringify({
        gateway: { port: 0 },
        inbound: {
          groupChat: { requireMention: false },
          reply: { agent: { baseUrl: model.baseUrl, model: "train" } },
        },
      }),
    );
    const filled = spawnSync(
      process.execPath,
      [fileURLToPath(import.meta.url), bundle, "--fill-config-cache", state],
      { env: process.env, stdio: ["ignore", "ignore", "pipe"], encoding: "utf8", timeout: 30_000 },
    );
    if (filled.status !== 0) {
      throw new Error(`filling the config cache failed (exit ${filled.status}): ${filled.stderr.trim()}`);
    }
    const filledEntry = await configCacheEntry(state);
    const { script, id, main } = await loadBundle(bundle);
    useState(state);
    const expect = async (argv: string[], code = 0) => {
      const got = await main(argv, id);
      if (got !== code) throw new Error(`clawdis ${argv.join(" ")} exited ${got}`);
    };
    await expect(["--version"]);
    await expect(["sessions", "--json"]);
    await expect(["sessions"]);
    const address = join(state, "gateway.json");
    const listening = new Promise<void>((resolve) => {
      const watcher = watch(state, () => {
        if (existsSync(address)) {
          watcher.close();
          resolve();
        }
      });
    });
    const gateway = main(["gateway"], id);
    const first = await Promise.race([listening.then(() => "listening"), gateway]);
    if (first !== "listening") throw new Error(`clawdis gateway exited ${first} before it listened`);
    // A run that validated the file (a cache miss) would have written the entry again: zod is in the code now.
    const entry = await configCacheEntry(state);
    if (entry !== filledEntry) {
      throw new Error(`the runs did not take the config from the cache (${filledEntry} -> ${entry})`);
    }
    const { url } = JSON.parse(await readFile(address, "utf8")) as { url: string };
    const token = (await readFile(join(state, "gateway.token"), "utf8")).trim();
    for (const [message, session] of [
      ["hello", "main"],
      ["and again", "main"],
      ["hello, group", "group:1"],
    ] as const) {
      const answer = await postMessage({ url, token }, message, session);
      if (!answer.includes("trained reply")) throw new Error(`a training message was answered ${answer}`);
    }
    // A graceful stop (the gateway's own signal handler), so the stop's functions are compiled too.
    process.kill(process.pid, "SIGTERM");
    const stopped = await gateway;
    if (stopped !== 0) throw new Error(`clawdis gateway exited ${stopped} at its stop`);
    const cache = Buffer.concat([Buffer.from(id, "latin1"), script.createCachedData()]);
    const tmp = `${bundle}.cache.tmp-${process.pid}`;
    await writeFile(tmp, cache);
    await rename(tmp, `${bundle}.cache`);
  } finally {
    model.server.closeAllConnections();
    model.server.close();
    await rm(state, { recursive: true, force: true });
  }
}

const [bundleArg = "", mode, stateArg = ""] = process.argv.slice(2);
(mode === "--fill-config-cache" ? fillConfigCache(bundleArg, stateArg) : train(bundleArg)).then(
  () => process.exit(0),
  (error: unknown) => {
    process.stderr.write(`train-bundle-cache: ${error instanceof Error ? error.message : String(error)}\n`);
    process.exit(1);
  },
);
