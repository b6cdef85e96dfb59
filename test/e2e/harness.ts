import { spawn } from "node:child_process";
import { existsSync } from "node:fs";
import { mkdir, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import type { MessageEntry, SessionMap } from "../../src/sessions/types.js";
import { type FakeOpenAI, startFakeOpenAI } from "../fakes/openai-server.js";
import { ClawdisProcess, GatewayProcess, type Json } from "./clawdis-process.js";

/**
 * The end-to-end harness: a temp state dir (also HOME, so nothing touches the real home), a `clawdis.json`
 * pointing the agent at a fake OpenAI-compatible server in the test process, and the REAL `clawdis` binary
 * (`node bin/clawdis.js …`, which runs the compiled `dist/`) as child processes. Every wait is on an event:
 * a log line, an HTTP answer, a fake request, a server-sent event, a process exit. The processes themselves (a
 * `clawdis …` child, a running gateway and its clients) are in clawdis-process.ts.
 */

export const REPO_ROOT = resolve(dirname(fileURLToPath(import.meta.url)), "../..");
/** The binary under test; `E2E_CLAWDIS_BIN` runs the suite against another build (e.g. an installed package). */
export const BIN = resolve(process.env.E2E_CLAWDIS_BIN ?? join(REPO_ROOT, "bin", "clawdis.js"));
export const DIST_MAIN = join(dirname(BIN), "..", "dist", "src", "main.js");
/** The echo plugin of the build under test when it has one (its plugin API matches), else this checkout's. */
export const ECHO_PLUGIN = [
  join(dirname(BIN), "..", "test", "fixtures", "echo-plugin"),
  join(REPO_ROOT, "test", "fixtures", "echo-plugin"),
].find((p) => existsSync(join(p, "index.js")))!;

export {
  type AgentReply,
  CALL_DEADLINE_MS,
  ClawdisProcess,
  type EchoInbound,
  type Exit,
  GatewayProcess,
  type HttpAnswer,
  type Json,
  type OutboxItem,
  STOP_DEADLINE_MS,
} from "./clawdis-process.js";

export interface E2eOptions {
  /** `echo.allowFrom`: who may talk through the echo transport (default `["alice", "bob"]`). */
  allowFrom?: string[];
  /** Merged (deeply) over the generated config. */
  config?: Json;
  /** Use this directory (created when missing, removed at cleanup) as the state dir instead of a new temp dir. */
  dir?: string;
}

/** Extra environment of one child (e.g. `CLAWDIS_CONFIG_PATH` for a second config on the same state dir). */
export interface SpawnOptions {
  env?: Record<string, string>;
}

const live = new Set<E2eState>();

/** One state directory, its config, a fake model server, and every process started on it. */
export class E2eState {
  readonly processes: ClawdisProcess[] = [];
  private constructor(
    readonly dir: string,
    readonly fake: FakeOpenAI,
    readonly port: number,
  ) {}

  static async create(options: E2eOptions = {}): Promise<E2eState> {
    if (!existsSync(DIST_MAIN)) {
      throw new Error(
        `${DIST_MAIN} is missing: build with \`npx tsc --noCheck\` (test/e2e/global-setup.ts does it)`,
      );
    }
    let dir: string;
    if (options.dir) {
      dir = options.dir;
      await mkdir(dir, { recursive: true });
    } else {
      dir = await mkdtemp(join(tmpdir(), "clawdis-e2e-"));
    }
    const fake = await startFakeOpenAI();
    const state = new E2eState(dir, fake, await freePort());
    live.add(state);
    await state.writeConfig(state.configFor(options));
    return state;
  }

  /** The config the harness writes: a free port, the fake model, the echo plugin from `plugins.load`. */
  configFor(options: E2eOptions = {}): Json {
    const base: Json = {
      gateway: { port: this.port, bind: "127.0.0.1" },
      // Titles (a sidecar call after a session's first exchange) only where a test asks for them.
      inbound: {
        reply: { session: { titles: false }, agent: { baseUrl: this.fake.url, model: "fake-model" } },
      },
      plugins: { load: [ECHO_PLUGIN] },
      echo: { allowFrom: options.allowFrom ?? ["alice", "bob"] },
    };
    return deepMerge(base, options.config ?? {});
  }

  get configPath(): string {
    return join(this.dir, "clawdis.json");
  }

  get storePath(): string {
    return join(this.dir, "sessions", "sessions.json");
  }

  get tokenPath(): string {
    return join(this.dir, "gateway.token");
  }

  transcriptPath(sessionId: string): string {
    return join(this.dir, "sessions", `${sessionId}.jsonl`);
  }

  async writeConfig(config: Json | string): Promise<void> {
    const text = typeof config === "string" ? config : `${JSON.stringify(config, null, 2)}\n`;
    await writeFile(this.configPath, text);
  }

  /** The environment of every child: this state dir as CLAWDIS_STATE_DIR and HOME, no inherited clawdis/OpenAI settings. */
  env(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
    const env: NodeJS.ProcessEnv = {};
    for (const [key, value] of Object.entries(process.env)) {
      if (/^(CLAWDIS_|OPENAI_)/.test(key) || key === "NODE_OPTIONS" || key.startsWith("VITEST")) continue;
      env[key] = value;
    }
    return { ...env, CLAWDIS_STATE_DIR: this.dir, HOME: this.dir, NO_COLOR: "1", ...extra };
  }

  /** Starts `clawdis <args>` with stdin piped. */
  spawn(args: string[], options: SpawnOptions = {}): ClawdisProcess {
    const child = spawn(process.execPath, [BIN, ...args], {
      cwd: this.dir,
      env: this.env(options.env),
      stdio: ["pipe", "pipe", "pipe"],
    });
    const proc = new ClawdisProcess(child, `clawdis ${args.join(" ")}`);
    this.processes.push(proc);
    return proc;
  }

  /** Starts `clawdis gateway` without waiting for it (`ready()` waits until it listens). */
  spawnGateway(options: SpawnOptions = {}): GatewayProcess {
    const child = spawn(process.execPath, [BIN, "gateway"], {
      cwd: this.dir,
      env: this.env(options.env),
      stdio: ["ignore", "pipe", "pipe"],
    });
    const gateway = new GatewayProcess(child, `clawdis gateway #${this.processes.length + 1}`);
    this.processes.push(gateway);
    return gateway;
  }

  /** Starts `clawdis gateway` and waits until it listens. */
  async startGateway(options: SpawnOptions = {}): Promise<GatewayProcess> {
    return this.spawnGateway(options).ready(this.tokenPath);
  }

  /** Runs `clawdis <args>` to the end (optionally typing `input` on stdin). */
  async cli(
    args: string[],
    input?: string,
    options: SpawnOptions & { timeoutMs?: number } = {},
  ): Promise<{ code: number | null; stdout: string; stderr: string }> {
    const proc = this.spawn(args, options);
    proc.child.stdin?.end(input ?? "");
    const exit = await proc.waitForExit(options.timeoutMs);
    return { code: exit.code, stdout: proc.stdout.text(), stderr: proc.stderr.text() };
  }

  async readStore(): Promise<SessionMap> {
    return JSON.parse(await readFile(this.storePath, "utf8")) as SessionMap;
  }

  async writeStore(map: SessionMap): Promise<void> {
    await mkdir(dirname(this.storePath), { recursive: true });
    await writeFile(this.storePath, `${JSON.stringify(map, null, 2)}\n`);
  }

  /** Every line of a transcript, parsed (a line that does not parse fails the test: the gateway must not write one). */
  async transcript(sessionId: string): Promise<Json[]> {
    const text = await readFile(this.transcriptPath(sessionId), "utf8");
    return text
      .split("\n")
      .filter((line) => line.trim().length > 0)
      .map((line) => JSON.parse(line) as Json);
  }

  /** The `message` entries of a transcript. */
  async messages(sessionId: string): Promise<MessageEntry[]> {
    return (await this.transcript(sessionId)).filter(
      (e) => e.type === "message",
    ) as unknown as MessageEntry[];
  }

  /** Kills whatever still runs, closes the fake, removes the directory (kept, and named, with `E2E_KEEP_STATE=1`). */
  async cleanup(): Promise<void> {
    live.delete(this);
    await Promise.all(this.processes.map((p) => p.kill()));
    await this.fake.close();
    if (process.env.E2E_KEEP_STATE === "1") {
      // Every process's output next to the state, to read what happened.
      const logs = join(this.dir, "e2e-logs");
      await mkdir(logs, { recursive: true });
      await Promise.all(
        this.processes.map((p, i) =>
          writeFile(
            join(logs, `${String(i + 1).padStart(3, "0")}-pid${p.pid}.log`),
            `${p.label}\n${p.stderr.text()}\n--- stdout\n${p.stdout.text()}`,
          ),
        ),
      );
      console.log(`[e2e] kept the state dir ${this.dir} (process output in e2e-logs/)`);
      return;
    }
    await rm(this.dir, { recursive: true, force: true });
  }
}

/** Cleans up every state created and not cleaned up yet (for afterEach/afterAll). */
export async function cleanupAll(): Promise<void> {
  await Promise.all([...live].map((state) => state.cleanup()));
}

/** The ports `freePort` hands out: below Linux's ephemeral range, one slice per Vitest worker. */
const PORT_BASE = 20_000;
const PORT_SLICE = 1_500;
const PORT_SLICES = 8;
/** Ports this process handed out already (a state's port is not bound until its gateway starts). */
const handedOut = new Set<number>();

/**
 * A port that was free a moment ago (the config needs a fixed one: `clawdis status` probes `gateway.port`), never
 * one this process handed out before. Drawn at random from this Vitest worker's slice of 20000–31999, below the
 * kernel's ephemeral range (`ip_local_port_range`, 32768–60999 by default): no outgoing connection and no
 * `listen(0)` anywhere on the machine takes it between this check and the gateway's bind, or while a gateway
 * restarts on it. Where the ephemeral range starts lower (or is unknown), a port the kernel picks.
 */
export async function freePort(): Promise<number> {
  if (!(await belowEphemeralRange(PORT_BASE + PORT_SLICE * PORT_SLICES))) return kernelPort();
  const slice = (Number(process.env.VITEST_POOL_ID ?? "1") - 1) % PORT_SLICES;
  for (let attempt = 0; attempt < 100; attempt++) {
    const port = PORT_BASE + slice * PORT_SLICE + Math.floor(Math.random() * PORT_SLICE);
    if (handedOut.has(port) || !(await canBind(port))) continue;
    handedOut.add(port);
    return port;
  }
  throw new Error(`no free port in ${PORT_BASE + slice * PORT_SLICE}+${PORT_SLICE} after 100 tries`);
}

/** Whether every port below `end` is outside the kernel's ephemeral range (Linux; false when unknown). */
async function belowEphemeralRange(end: number): Promise<boolean> {
  const range = await readFile("/proc/sys/net/ipv4/ip_local_port_range", "utf8").catch(() => "");
  const low = Number(range.trim().split(/\s+/)[0]);
  return Number.isInteger(low) && low >= end;
}

function canBind(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const server = createServer();
    server.once("error", () => resolve(false));
    server.listen(port, "127.0.0.1", () => server.close(() => resolve(true)));
  });
}

function kernelPort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const address = server.address();
      const port = typeof address === "object" && address ? address.port : 0;
      server.close(() => resolve(port));
    });
  });
}

function isObject(value: unknown): value is Json {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

export function deepMerge(base: Json, over: Json): Json {
  const out: Json = { ...base };
  for (const [key, value] of Object.entries(over)) {
    const current = out[key];
    out[key] = isObject(current) && isObject(value) ? deepMerge(current, value) : value;
  }
  return out;
}

/** The text of a stored chat message. */
export function contentOf(entry: MessageEntry): string {
  const content: unknown = entry.message.content;
  return typeof content === "string" ? content : JSON.stringify(content);
}
