/**
 * What the message benches share: the real `clawdis gateway`, the fake model server and the bare relay as
 * child processes; a keep-alive HTTP client for `POST /api/agent`; CPU time and memory of a process read from
 * /proc; a state directory seeded with sessions that exist (store entries and transcripts).
 */
import { type ChildProcess, spawn } from "node:child_process";
import { mkdir, readFile, writeFile } from "node:fs/promises";
import { Agent, request } from "node:http";
import { dirname, join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import type { MessageEntry, SessionEntry } from "../src/sessions/types.js";

const distBench = dirname(fileURLToPath(import.meta.url));
const repoRoot = join(distBench, "..", "..");
export const CLAWDIS_BIN = join(repoRoot, "bin", "clawdis.js");

/** A child process that serves HTTP; `url` from its first stdout line (or its "listening on" log line). */
export interface ChildServer {
  url: string;
  pid: number;
  child: ChildProcess;
  /** SIGTERM, resolves at exit. */
  stop(): Promise<void>;
}

function stopper(child: ChildProcess): () => Promise<void> {
  return () =>
    new Promise((resolve) => {
      if (child.exitCode !== null || child.signalCode !== null) return resolve();
      child.once("exit", () => resolve());
      child.kill("SIGTERM");
    });
}

/** Where the spans of a process started with `spans` go (bench/request-spans.ts), and how it is started so. */
export interface SpansOption {
  /** A directory: the process runs with the request-spans preload, writing `<pid>.json` there at exit. */
  spans?: string;
}

/** The node arguments and environment of a process started with `options`. */
function spansLaunch(options: SpansOption): { args: string[]; env: Record<string, string> } {
  if (!options.spans) return { args: [], env: {} };
  return {
    args: ["--import", pathToFileURL(join(distBench, "request-spans.js")).href],
    env: { CLAWDIS_BENCH_SPANS: options.spans },
  };
}

/**
 * The spans (ms) a process started with `spans: dir` recorded, by `x-bench-id` (bench/request-spans.ts); read
 * once it has exited.
 */
export async function readSpans(dir: string, pid: number): Promise<Map<string, number>> {
  const spans = JSON.parse(await readFile(join(dir, `${pid}.json`), "utf8")) as Record<string, number>;
  return new Map(Object.entries(spans).map(([id, us]) => [id, us / 1000]));
}

/** Spawns `node <script> ...args` and waits for its first stdout line, `{"url": …}`. */
async function startJsonChild(
  script: string,
  args: string[],
  options: SpansOption = {},
): Promise<ChildServer> {
  const launch = spansLaunch(options);
  const child = spawn(process.execPath, [...launch.args, join(distBench, script), ...args], {
    env: { ...process.env, ...launch.env },
    stdio: ["pipe", "pipe", "inherit"],
  });
  const url = await new Promise<string>((resolve, reject) => {
    let buffer = "";
    child.stdout?.on("data", (chunk: Buffer) => {
      buffer += chunk.toString();
      const nl = buffer.indexOf("\n");
      if (nl !== -1) resolve((JSON.parse(buffer.slice(0, nl)) as { url: string }).url);
    });
    child.once("exit", (code) => reject(new Error(`${script} exited ${code} before it was ready`)));
  });
  return { url, pid: child.pid ?? -1, child, stop: stopper(child) };
}

/** The fake model server in a process of its own (bench/model-server-process.ts). */
export function startModelServer(): Promise<ChildServer> {
  return startJsonChild("model-server-process.js", []);
}

/** The bare relay (bench/relay-process.ts) in front of the model server at `modelUrl`. */
export function startRelay(modelUrl: string, options: SpansOption = {}): Promise<ChildServer> {
  return startJsonChild("relay-process.js", [modelUrl], options);
}

export interface GatewayProcess extends ChildServer {
  token: string;
  /** Everything it logged so far. */
  output(): string;
  /** How many lines of its log so far hold `text` (one of the watched texts). */
  count(text: string): number;
}

/** `clawdis gateway` on `stateDir` (its `clawdis.json` written from `config`), once it listens. */
export async function startGateway(
  stateDir: string,
  config: unknown,
  options: SpansOption & {
    /** The `bin/clawdis.js` to start (default this checkout's, CLAWDIS_BIN): another build, to compare. */
    bin?: string;
  } = {},
): Promise<GatewayProcess> {
  await mkdir(stateDir, { recursive: true });
  await writeFile(join(stateDir, "clawdis.json"), JSON.stringify(config));
  const launch = spansLaunch(options);
  const env = { ...process.env, ...launch.env, CLAWDIS_STATE_DIR: stateDir, HOME: stateDir };
  // `CLAWDIS_BENCH_NODE_ARGS` (e.g. "--cpu-prof --cpu-prof-dir=/tmp/prof") goes to the gateway's node.
  const nodeArgs = (process.env.CLAWDIS_BENCH_NODE_ARGS ?? "").split(" ").filter((a) => a.length > 0);
  const child = spawn(
    process.execPath,
    [...nodeArgs, ...launch.args, options.bin ?? CLAWDIS_BIN, "gateway"],
    {
      env,
      stdio: ["ignore", "pipe", "pipe"],
    },
  );
  const chunks: string[] = [];
  const counts = new Map<string, number>();
  const watched = ["idle session unloaded", "memory of a burst given back", "compact=true"];
  /** Per stream: the start of a line whose end has not come yet (a line may span two chunks). */
  const partial = new Map<unknown, string>();
  const onData = (stream: unknown) => (chunk: Buffer) => {
    const text = chunk.toString();
    // Only the start of the log is kept whole; later lines are only counted (a long run logs a lot).
    if (chunks.length < 200) chunks.push(text);
    const lines = ((partial.get(stream) ?? "") + text).split("\n");
    partial.set(stream, lines.pop() ?? "");
    for (const line of lines) {
      for (const w of watched) if (line.includes(w)) counts.set(w, (counts.get(w) ?? 0) + 1);
    }
  };
  child.stdout?.on("data", onData(child.stdout));
  child.stderr?.on("data", onData(child.stderr));
  const url = await new Promise<string>((resolve, reject) => {
    const check = () => {
      const match = /listening on (http:\/\/[0-9.:]+)/.exec(chunks.join(""));
      if (match) resolve(match[1] as string);
    };
    child.stdout?.on("data", check);
    child.stderr?.on("data", check);
    child.once("exit", (code) => reject(new Error(`gateway exited ${code}: ${chunks.join("")}`)));
  });
  const token = (await readFile(join(stateDir, "gateway.token"), "utf8")).trim();
  return {
    url,
    token,
    pid: child.pid ?? -1,
    child,
    stop: stopper(child),
    output: () => chunks.join(""),
    count: (text) => counts.get(text) ?? 0,
  };
}

/**
 * Until `gateway` logged that it gave back the memory of the burst that ended (its compacting collection,
 * `memory of a burst given back … compact=true`, more than `before` times: COLLECT_QUIET_MS after the burst's last
 * load, collection-waves.ts); rejects after `waitMs`. A burst of session loads (putting sessions in use) ends in
 * such collections, with pauses of 30-150 ms: measured rounds start after them, on sessions in use.
 */
export async function gaveBack(gateway: GatewayProcess, before: number, waitMs: number): Promise<void> {
  const deadline = Date.now() + waitMs;
  while (gateway.count("compact=true") <= before) {
    if (Date.now() > deadline)
      throw new Error(`the gateway did not give the memory of the burst back in ${waitMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

/** The gateway config of the benches: the model server as endpoint, groups answered without a mention. */
export function gatewayConfig(modelUrl: string, session: Record<string, unknown> = {}): unknown {
  return {
    gateway: { port: 0 },
    inbound: {
      groupChat: { requireMention: false },
      reply: { agent: { baseUrl: modelUrl, model: "fake-model" }, session: { titles: false, ...session } },
    },
  };
}

export interface Answer {
  status: number;
  text: string;
  /** process.hrtime.bigint() when the request was handed to the socket, and when the answer was complete. */
  sentAt: bigint;
  doneAt: bigint;
}

/** A keep-alive client of `POST /api/agent` (the gateway's, or the relay's). */
export class AgentClient {
  private readonly agent = new Agent({ keepAlive: true, maxSockets: 512 });
  private readonly target: URL;

  constructor(
    url: string,
    private readonly token = "",
  ) {
    this.target = new URL("/api/agent", url);
  }

  /** `id`, if given, goes as `x-bench-id` (the spans of bench/request-spans.ts are keyed by it). */
  post(message: string, session: string, id?: string): Promise<Answer> {
    const body = JSON.stringify({ message, session });
    return new Promise((resolve, reject) => {
      let sentAt = 0n;
      const req = request(
        {
          agent: this.agent,
          host: this.target.hostname,
          port: this.target.port,
          path: this.target.pathname,
          method: "POST",
          headers: {
            authorization: `Bearer ${this.token}`,
            "content-type": "application/json",
            "content-length": Buffer.byteLength(body),
            ...(id ? { "x-bench-id": id } : {}),
          },
        },
        (res) => {
          const parts: Buffer[] = [];
          res.on("data", (part: Buffer) => parts.push(part));
          res.on("end", () => {
            const doneAt = process.hrtime.bigint();
            const raw = Buffer.concat(parts).toString("utf8");
            let text = raw;
            try {
              const parsed = JSON.parse(raw) as { payloads?: { text: string }[] };
              text = (parsed.payloads ?? []).map((p) => p.text).join("\n");
            } catch {
              // Not JSON: the raw body is what went wrong.
            }
            resolve({ status: res.statusCode ?? 0, text, sentAt, doneAt });
          });
          res.on("error", reject);
        },
      );
      req.on("error", reject);
      sentAt = process.hrtime.bigint();
      req.end(body);
    });
  }

  close(): void {
    this.agent.destroy();
  }
}

/** An answer of the fake model server, checked: status 200 and its `model-at:<ns>` arrival time. */
export function modelArrival(answer: Answer): bigint {
  const match = /model-at:(\d+)/.exec(answer.text);
  if (answer.status !== 200 || !match) {
    throw new Error(`the message was not answered by the model: ${answer.status} ${answer.text}`);
  }
  return BigInt(match[1] as string);
}

export const ms = (from: bigint, to: bigint) => Number(to - from) / 1e6;

/**
 * CPU time (user + system) a process used so far, in ms (from /proc/<pid>/stat, 100 ticks a second); `thread`:
 * only its main thread's (/proc/<pid>/task/<pid>/stat), the one JavaScript runs on.
 */
export async function cpuMs(pid: number, thread: "all" | "main" = "all"): Promise<number> {
  const stat = await readFile(
    thread === "main" ? `/proc/${pid}/task/${pid}/stat` : `/proc/${pid}/stat`,
    "utf8",
  );
  const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  return (Number(fields[11]) + Number(fields[12])) * 10;
}

/** Resident memory now and its peak (VmRSS, VmHWM), in MB. */
export async function memoryMb(pid: number): Promise<{ rss: number; peak: number }> {
  const status = await readFile(`/proc/${pid}/status`, "utf8");
  const kb = (name: string) => Number(new RegExp(`${name}:\\s+(\\d+) kB`).exec(status)?.[1] ?? Number.NaN);
  return { rss: kb("VmRSS") / 1024, peak: kb("VmHWM") / 1024 };
}

export interface SeedOptions {
  /** Keys are `group:<prefix>-<i>`. */
  prefix: string;
  count: number;
  /** Messages in each session's transcript (user and assistant alternating). */
  messages: number;
}

/** The key of seeded session `i`. */
export const seededKey = (prefix: string, i: number) => `group:${prefix}-${i}`;

/**
 * A state directory whose store holds `count` sessions that exist — entries with the fields a gateway writes,
 * last exchange within the last 30 minutes (no idle expiry) — each with a transcript of `messages` messages.
 */
export async function seedSessions(stateDir: string, options: SeedOptions): Promise<void> {
  const dir = join(stateDir, "sessions");
  await mkdir(dir, { recursive: true, mode: 0o700 });
  const now = Date.now();
  const map: Record<string, SessionEntry> = {};
  const writes: Promise<void>[] = [];
  for (let i = 0; i < options.count; i++) {
    const key = seededKey(options.prefix, i);
    const sessionId = `${options.prefix}-${i.toString(36)}-5e3d-4c1b-9a0f-${(1e11 + i).toString(16)}`;
    const at = now - ((i * 7919) % 1_800_000);
    map[key] = {
      sessionId,
      updatedAt: at,
      lastInteractionAt: at,
      createdAt: at - 86_400_000,
      model: "fake-model",
      inputTokens: 12_000 + i,
      outputTokens: 800 + (i % 100),
      totalTokens: 12_800 + i,
      contextTokens: 1_500 + (i % 500),
      ...(i % 5 === 0 ? { thinkingLevel: "low" as const } : {}),
      origin: {
        channel: "api",
        chatId: `api:${i}`,
        chatType: "direct",
        senderId: "local",
        senderName: "owner",
      },
    };
    const lines = [
      JSON.stringify({
        type: "session",
        version: 1,
        id: sessionId,
        sessionKey: key,
        createdAt: new Date(at).toISOString(),
      }),
    ];
    for (let m = 0; m < options.messages; m++) {
      const entry: MessageEntry = {
        type: "message",
        id: `seed${i.toString(36)}x${m}`,
        ts: new Date(at - (options.messages - m) * 60_000).toISOString(),
        message:
          m % 2 === 0
            ? { role: "user", content: `question ${m} about the plan for the week, with some detail` }
            : { role: "assistant", content: `answer ${m}: the plan holds; two items moved to Thursday.` },
        meta: { channel: "api", chatId: `api:${i}`, senderId: "local", messageId: `seed-${i}-${m}` },
      };
      lines.push(JSON.stringify(entry));
    }
    writes.push(writeFile(join(dir, `${sessionId}.jsonl`), `${lines.join("\n")}\n`, { mode: 0o600 }));
    if (writes.length >= 256) await Promise.all(writes.splice(0));
  }
  await Promise.all(writes);
  await writeFile(join(dir, "sessions.json"), `${JSON.stringify(map, null, 2)}\n`, { mode: 0o600 });
}

/** Runs `count` calls of `fn` with `concurrency` in flight. */
export async function pool(
  count: number,
  concurrency: number,
  fn: (i: number) => Promise<void>,
): Promise<void> {
  let next = 0;
  const worker = async () => {
    while (next < count) await fn(next++);
  };
  await Promise.all(Array.from({ length: Math.min(concurrency, count) }, worker));
}
