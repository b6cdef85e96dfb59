/**
 * Start-up benchmarks (issue 12), each against a baseline started the same way in the same run, interleaved:
 * - `clawdis sessions --json` cold on a 10,000-key store with the default store and config (no config file;
 *   CLAWDIS_STATE_DIR holds `sessions/sessions.json`), against a plain `node` script that reads the same file,
 *   parses it, sorts the entries the same way and prints the same JSON (checked: the same bytes, every round);
 * - the same `clawdis sessions --json` with a config file as a real user has (a model, `inbound.allowFrom`, a
 *   `telegram` section with a token and an allowlist), against the same script: validated on the warm-up run,
 *   then taken from the config cache (src/core/config-cache.ts) as every later run of an unchanged file is;
 * - `clawdis sessions` (the table; piped, so one tab-separated line per session) on the same store,
 *   `clawdis --version`, and `clawdis status` with that config file (a 100-session store, no gateway running),
 *   against `node -e 0`;
 * - `clawdis gateway` start → listening (until its HTTP port accepts a connection) with a model configured
 *   through the fake OpenAI server in this process and Telegram through a fake Bot API server, against a trivial
 *   `node:http` server spawned the same way.
 */
import { spawn, spawnSync } from "node:child_process";
import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { connect, createServer } from "node:net";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { startFakeOpenAI } from "../test/fakes/openai-server.js";
import { FakeTelegram } from "../test/fakes/telegram-server.js";
import { type BenchRow, interleaved } from "./bench-row.js";

const KEYS = 10_000;
const ROUNDS = 10;

/** dist/bench/startup-bench.js → the checkout. */
const repoRoot = join(dirname(fileURLToPath(import.meta.url)), "..", "..");
const bin = join(repoRoot, "bin", "clawdis.js");

/** A config file as a real user's: a model, a WhatsApp allowlist, Telegram with a token and an allowlist. */
function userConfig(port: number): string {
  return `${JSON.stringify(
    {
      gateway: { port },
      inbound: { allowFrom: ["+15555550123"], reply: { agent: { model: "gpt-4o-mini" } } },
      telegram: { botToken: "123456789:bench-token", allowFrom: [123456789, "@bench_user"] },
    },
    null,
    2,
  )}\n`;
}

/** A store shaped like a busy gateway's: the primary session and groups with the usual fields, mixed ages. */
export function storeText(now: number, keys = KEYS): string {
  const map: Record<string, unknown> = {};
  for (let n = 0; n < keys; n++) {
    map[n === 0 ? "main" : `group:-100${n}`] = {
      sessionId: `0b7c${n.toString(16).padStart(4, "0")}-1f2e-4d3c-9b8a-${(n * 7919).toString(16).padStart(12, "0")}`,
      updatedAt: now - ((n * 7919) % KEYS) * 60_000,
      lastInteractionAt: now - n * 60_000,
      model: "gpt-4o-mini",
      inputTokens: 1000 + n,
      outputTokens: 200 + n,
      totalTokens: 1200 + 2 * n,
      contextTokens: 9000 + n,
      compactionCount: n % 3,
      origin: { channel: "telegram", chatId: `-100${n}`, chatType: "group", senderId: `${n}` },
    };
  }
  return `${JSON.stringify(map, null, 2)}\n`;
}

/**
 * The baseline of `sessions --json`: what the command does, written plainly (read, parse, sort newest first with
 * ties by key, the rows' fields in the command's order, pretty-printed), without validating anything.
 */
const PLAIN_SESSIONS_JSON = `import { readFileSync } from "node:fs";
const path = process.argv[2];
const map = JSON.parse(readFileSync(path, "utf8"));
const now = Date.now();
const keys = Object.keys(map);
keys.sort((a, b) => map[b].updatedAt - map[a].updatedAt || (a < b ? -1 : a > b ? 1 : 0));
const sessions = keys.map((key) => {
  const entry = map[key];
  const kind = key.startsWith("group:") ? "group" : key === "global" ? "global" : "direct";
  const row = { key, kind, sessionId: entry.sessionId, updatedAt: entry.updatedAt, ageMs: 0 };
  Object.assign(row, entry);
  row.key = key;
  row.kind = kind;
  row.ageMs = Math.max(0, now - entry.updatedAt);
  return row;
});
process.stdout.write(JSON.stringify({ path, count: sessions.length, activeMinutes: null, sessions }, null, 2) + "\\n");
`;

const TRIVIAL_HTTP = `import http from "node:http";
const server = http.createServer((req, res) => res.end("ok"));
server.listen(Number(process.env.BENCH_PORT), "127.0.0.1");
process.on("SIGTERM", () => server.close(() => process.exit(0)));
`;

/** One cold run of `node <args>` to its exit, in ms; throws when it fails. */
export function run(args: string[], env: NodeJS.ProcessEnv): { ms: number; stdout: string } {
  const start = process.hrtime.bigint();
  const result = spawnSync(process.execPath, args, { env, encoding: "utf8", maxBuffer: 1 << 28 });
  const ms = Number(process.hrtime.bigint() - start) / 1e6;
  if (result.status !== 0)
    throw new Error(`node ${args.join(" ")} exited ${result.status}: ${result.stderr}`);
  return { ms, stdout: result.stdout };
}

/** ageMs depends on the moment each program read the clock; everything else must be the same bytes. */
const withoutAges = (json: string) => json.replace(/"ageMs": \d+/g, '"ageMs": 0');

export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

function accepts(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect(port, "127.0.0.1");
    socket.once("connect", () => {
      socket.destroy();
      resolve(true);
    });
    socket.once("error", () => resolve(false));
  });
}

/**
 * Spawns `node <args>` and resolves with the ms until `port` accepts a connection (tried every millisecond); then
 * stops the process (SIGTERM) and waits for its exit. Throws when it exits before it listens.
 */
export async function timeToListen(args: string[], env: NodeJS.ProcessEnv, port: number): Promise<number> {
  const start = process.hrtime.bigint();
  const child = spawn(process.execPath, args, { env, stdio: ["ignore", "ignore", "pipe"] });
  let stderr = "";
  child.stderr.on("data", (chunk: Buffer) => {
    stderr += chunk.toString();
  });
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  let gone = false;
  void exited.then(() => {
    gone = true;
  });
  while (!(await accepts(port))) {
    if (gone) throw new Error(`node ${args.join(" ")} exited before it listened: ${stderr}`);
    await new Promise((resolve) => setTimeout(resolve, 1));
  }
  const ms = Number(process.hrtime.bigint() - start) / 1e6;
  child.kill("SIGTERM");
  await exited;
  return ms;
}

/**
 * A state directory for the start → listening rows: a config file as a real user's gateway has (a model and
 * Telegram, against the fakes at `modelUrl` and `telegram`, on `port`), written once: every start from the second
 * on is a restart that takes the validated config from the cache (core/config-cache.ts). Returns the environment
 * a gateway on it is started with.
 */
export async function startState(
  stateDir: string,
  port: number,
  modelUrl: string,
  telegram: Pick<FakeTelegram, "token" | "url">,
): Promise<NodeJS.ProcessEnv> {
  await mkdir(stateDir, { recursive: true });
  const config = {
    gateway: { port },
    inbound: { reply: { agent: { baseUrl: modelUrl, model: "fake-model" } } },
    telegram: { botToken: telegram.token, apiRoot: telegram.url, allowFrom: [111] },
  };
  await writeFile(join(stateDir, "clawdis.json"), JSON.stringify(config));
  const env: NodeJS.ProcessEnv = { ...process.env, CLAWDIS_STATE_DIR: stateDir, HOME: stateDir };
  delete env.CLAWDIS_CONFIG_PATH;
  return env;
}

export async function benchStartup(): Promise<BenchRow[]> {
  const dir = await mkdtemp(join(tmpdir(), "clawdis-startup-bench-"));
  const fake = await startFakeOpenAI();
  const telegram = await FakeTelegram.start();
  try {
    const rows: BenchRow[] = [];

    // sessions: a state directory with only the store in it (default store path, no config file).
    const state = join(dir, "state");
    const storePath = join(state, "sessions", "sessions.json");
    await mkdir(dirname(storePath), { recursive: true });
    const text = storeText(Date.now());
    await writeFile(storePath, text);
    const sizeMb = (Buffer.byteLength(text) / 1024 / 1024).toFixed(1);
    const plain = join(dir, "plain-sessions-json.mjs");
    await writeFile(plain, PLAIN_SESSIONS_JSON);
    const env: NodeJS.ProcessEnv = { ...process.env, CLAWDIS_STATE_DIR: state, HOME: dir };
    delete env.CLAWDIS_CONFIG_PATH;

    // Each round's two outputs are compared (outside the timed runs).
    let printed = "";
    let checked = 0;
    const json = await interleaved(
      ROUNDS,
      async () => {
        const ours = run([bin, "sessions", "--json"], env);
        printed = ours.stdout;
        return ours.ms;
      },
      async () => {
        const theirs = run([plain, storePath], env);
        if (withoutAges(printed) !== withoutAges(theirs.stdout)) {
          throw new Error("clawdis sessions --json and the plain script printed different JSON");
        }
        checked++;
        return theirs.ms;
      },
    );
    if ((JSON.parse(printed) as { count: number }).count !== KEYS) {
      throw new Error(`clawdis sessions --json did not list the ${KEYS} sessions`);
    }
    rows.push({
      name: `clawdis sessions --json, cold, ${KEYS / 1000}k keys`,
      unit: "ms",
      ours: json.ours,
      baselineName: "node: read + parse + sort + print the same JSON",
      baseline: json.baseline,
      target: { kind: "ratio", max: 1.25 },
      note: `${sizeMb} MB store, default store and config (no config file); same bytes checked ${checked} times`,
    });

    // The same store and script, with a config file beside the store (its gateway port is one nothing listens on).
    const configured = join(dir, "configured");
    const configuredStore = join(configured, "sessions", "sessions.json");
    await mkdir(dirname(configuredStore), { recursive: true });
    await writeFile(configuredStore, text);
    await writeFile(join(configured, "clawdis.json"), userConfig(await freePort()));
    const configuredEnv: NodeJS.ProcessEnv = { ...env, CLAWDIS_STATE_DIR: configured };
    let checkedWithConfig = 0;
    const withConfig = await interleaved(
      ROUNDS,
      async () => {
        const ours = run([bin, "sessions", "--json"], configuredEnv);
        printed = ours.stdout;
        return ours.ms;
      },
      async () => {
        const theirs = run([plain, configuredStore], configuredEnv);
        if (withoutAges(printed) !== withoutAges(theirs.stdout)) {
          throw new Error(
            "clawdis sessions --json (with a config file) and the plain script printed different JSON",
          );
        }
        checkedWithConfig++;
        return theirs.ms;
      },
    );
    rows.push({
      name: `clawdis sessions --json, cold, ${KEYS / 1000}k keys, with a config file`,
      unit: "ms",
      ours: withConfig.ours,
      baselineName: "node: read + parse + sort + print the same JSON",
      baseline: withConfig.baseline,
      target: { kind: "ratio", max: 1.25 },
      note: `a model, inbound.allowFrom and a telegram section; config cache warm (validated on the warm-up run); same bytes checked ${checkedWithConfig} times`,
    });

    const table = await interleaved(
      ROUNDS,
      async () => run([bin, "sessions"], env).ms,
      async () => run(["-e", "0"], env).ms,
    );
    rows.push({
      name: `clawdis sessions (table, piped), cold, ${KEYS / 1000}k keys`,
      unit: "ms",
      ours: table.ours,
      baselineName: "node -e 0",
      baseline: table.baseline,
      note: "no target in issue 12; the same store",
    });

    const version = await interleaved(
      ROUNDS,
      async () => run([bin, "--version"], env).ms,
      async () => run(["-e", "0"], env).ms,
    );
    rows.push({
      name: "clawdis --version, cold",
      unit: "ms",
      ours: version.ours,
      baselineName: "node -e 0",
      baseline: version.baseline,
      target: { kind: "ratio", max: 1.2 },
      note: "issue 35",
    });

    // status: the config file above, a small store (the row is the command's start, not the store's parse).
    const statusState = join(dir, "status");
    await mkdir(join(statusState, "sessions"), { recursive: true });
    await writeFile(join(statusState, "sessions", "sessions.json"), storeText(Date.now(), 100));
    await writeFile(join(statusState, "clawdis.json"), userConfig(await freePort()));
    const statusEnv: NodeJS.ProcessEnv = { ...env, CLAWDIS_STATE_DIR: statusState };
    const status = await interleaved(
      ROUNDS,
      async () => {
        const ours = run([bin, "status"], statusEnv);
        if (!ours.stdout.includes("gateway: not running"))
          throw new Error(`clawdis status said: ${ours.stdout}`);
        return ours.ms;
      },
      async () => run(["-e", "0"], env).ms,
    );
    rows.push({
      name: "clawdis status, cold",
      unit: "ms",
      ours: status.ours,
      baselineName: "node -e 0",
      baseline: status.baseline,
      target: { kind: "ratio", max: 2 },
      note: "the config file above (cache warm), a 100-session store, no gateway running (its port refuses)",
    });

    // gateway: one state directory (every round after the warm-up is a restart), a model and Telegram configured
    // (a fake Bot API server on 127.0.0.1), as a real user's gateway is.
    const trivial = join(dir, "trivial-http.mjs");
    await writeFile(trivial, TRIVIAL_HTTP);
    const gatewayPort = await freePort();
    const gatewayEnv = await startState(join(dir, "gateway-state"), gatewayPort, fake.url, telegram);
    const start = await interleaved(
      ROUNDS,
      async () => timeToListen([bin, "gateway"], gatewayEnv, gatewayPort),
      async () => {
        const port = await freePort();
        return timeToListen([trivial], { ...gatewayEnv, BENCH_PORT: String(port) }, port);
      },
    );
    rows.push({
      name: "clawdis gateway: start → listening",
      unit: "ms",
      ours: start.ours,
      baselineName: "trivial node:http server, spawned the same way",
      baseline: start.baseline,
      target: { kind: "ratio", max: 1.5 },
      note: "until the port accepts a connection; a model (fake OpenAI server) and Telegram (fake Bot API) configured, a restart on one state dir and one config file (cache warm)",
    });
    return rows;
  } finally {
    await fake.close();
    await telegram.close();
    await rm(dir, { recursive: true, force: true });
  }
}
