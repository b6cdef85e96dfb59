/**
 * Gateway benchmarks (issue "gateway runtime"):
 * - overhead per message: transport hand-in → first byte of the model request, p50/p99, 1,000 sessions in the
 *   store, against the fake model server's own round trip;
 * - messages per second through the whole pipeline into 100 group sessions with an instant model, against the
 *   fake model server alone (requests per second, same concurrency);
 * - `clawdis gateway` start → listening and its RSS after 10 s idle, against a trivial Node HTTP server;
 * - `clawdis --version` and `clawdis sessions --json` cold starts against `node -e 0`.
 */
import { spawn } from "node:child_process";
import { mkdir, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { performance } from "node:perf_hooks";
import { fileURLToPath } from "node:url";
import { systemClock } from "../src/core/clock.js";
import { configSchema } from "../src/core/config-schema.js";
import { silentLogger } from "../src/core/logger.js";
import { Gateway } from "../src/gateway.js";
import {
  definePlugin,
  type InboundMessage,
  PLUGIN_API_VERSION,
  type PluginContext,
  type TurnOutcome,
} from "../src/plugin-api/index.js";
import { startFakeOpenAI } from "../test/fakes/openai-server.js";
import { type BenchRow, median, percentile } from "./bench-row.js";

const repoRoot = join(dirname(fileURLToPath(import.meta.url)), "..", "..");
const bin = join(repoRoot, "bin", "clawdis.js");

function deferredContext(): { plugin: ReturnType<typeof definePlugin>; context: () => PluginContext } {
  let ctx: PluginContext | undefined;
  const plugin = definePlugin({
    apiVersion: PLUGIN_API_VERSION,
    id: "bench",
    create: (context) => {
      ctx = context;
      return {
        transport: {
          capabilities: { maxTextLength: 100_000 },
          authorize: () => ({ allowed: true }),
          send: async () => ({}),
        },
      };
    },
  });
  return {
    plugin,
    context: () => {
      if (!ctx) throw new Error("not started");
      return ctx;
    },
  };
}

async function seedStore(path: string, count: number): Promise<void> {
  const map: Record<string, unknown> = {};
  const now = Date.now();
  for (let i = 0; i < count; i++) {
    map[`group:seed-${i}`] = {
      sessionId: `seed-${i}`,
      updatedAt: now - i * 1000,
      model: "fake-model",
      contextTokens: 1234,
    };
  }
  await mkdir(dirname(path), { recursive: true });
  await writeFile(path, `${JSON.stringify(map, null, 2)}\n`);
}

async function inProcessGateway(stateDir: string, baseUrl: string) {
  const storePath = join(stateDir, "sessions", "sessions.json");
  await seedStore(storePath, 1000);
  const bench = deferredContext();
  const config = configSchema.parse({
    inbound: { groupChat: { requireMention: false }, reply: { agent: { baseUrl, model: "fake-model" } } },
  });
  const gateway = new Gateway({
    config,
    env: { CLAWDIS_STATE_DIR: stateDir, HOME: stateDir },
    storePath,
    workspaceDir: join(stateDir, "workspace"),
    configDir: stateDir,
    plugins: [bench.plugin],
    builtinTools: [],
    logger: silentLogger,
    version: "bench",
    token: "bench-token-0123456789",
    clock: systemClock,
    listen: false,
    llmMaxRetries: 0,
  });
  await gateway.start();
  return { gateway, context: bench.context() };
}

/** One tiny streamed completion straight to the fake model server, request to last byte. */
async function fakeRoundTrip(url: string): Promise<void> {
  const res = await fetch(`${url}/chat/completions`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ model: "fake-model", stream: true, messages: [{ role: "user", content: "hi" }] }),
  });
  await res.text();
}

let nextId = 0;
function message(chatId: string, chatType: "direct" | "group"): InboundMessage {
  nextId++;
  return {
    channel: "bench",
    chatId,
    chatType,
    senderId: "owner",
    messageId: `b${nextId}`,
    text: `message ${nextId}`,
    receivedAt: Date.now(),
  };
}

async function accepted(context: PluginContext, msg: InboundMessage): Promise<TurnOutcome> {
  const result = await context.receive(msg);
  if (result.status !== "accepted") throw new Error(`not accepted: ${result.status}`);
  return result.done;
}

async function benchOverhead(): Promise<BenchRow[]> {
  const fake = await startFakeOpenAI();
  const stateDir = await mkdtemp(join(tmpdir(), "clawdis-bench-gw-"));
  try {
    const { gateway, context } = await inProcessGateway(stateDir, fake.url);
    const overheads: number[] = [];
    let sentAt = 0;
    const onRequest = () => overheads.push(performance.now() - sentAt);
    fake.events.on("request", onRequest);
    const runs = 300;
    for (let i = 0; i < runs + 20; i++) {
      sentAt = performance.now();
      await accepted(context, message(`g${i % 50}`, "group"));
    }
    // Stop listening before the baseline's own requests reach the fake.
    fake.events.off("request", onRequest);
    overheads.splice(0, 20); // warm-up
    await gateway.stop();
    // The fake model server's own latency: one tiny streamed completion, request to last byte.
    const own: number[] = [];
    for (let i = 0; i < 220; i++) {
      const start = performance.now();
      await fakeRoundTrip(fake.url);
      if (i >= 20) own.push(performance.now() - start);
    }
    return [
      {
        name: "message hand-in → model request (p50), 1,000 sessions",
        ours: percentile(overheads, 50),
        baselineName: "fake model round trip p50",
        baseline: percentile(own, 50),
        unit: "ms",
        note: `p99 ${percentile(overheads, 99).toFixed(2)} ms vs ${percentile(own, 99).toFixed(2)} ms; ${overheads.length} msgs`,
      },
    ];
  } finally {
    await fake.close();
    await rm(stateDir, { recursive: true, force: true });
  }
}

async function benchThroughput(): Promise<BenchRow[]> {
  const fake = await startFakeOpenAI();
  const stateDir = await mkdtemp(join(tmpdir(), "clawdis-bench-tp-"));
  try {
    const { gateway, context } = await inProcessGateway(stateDir, fake.url);
    const total = 2000;
    const start = performance.now();
    const all: Promise<TurnOutcome>[] = [];
    for (let i = 0; i < total; i++) all.push(accepted(context, message(`room-${i % 100}`, "group")));
    const outcomes = await Promise.all(all);
    const seconds = (performance.now() - start) / 1000;
    if (outcomes.some((o) => o.stopReason !== "end")) throw new Error("a bench turn failed");
    await gateway.stop();
    // The fake alone: the same number of requests, 100 at a time.
    const fakeStart = performance.now();
    let sent = 0;
    const worker = async () => {
      while (sent < total) {
        sent++;
        await fakeRoundTrip(fake.url);
      }
    };
    await Promise.all(Array.from({ length: 100 }, worker));
    const fakeSeconds = (performance.now() - fakeStart) / 1000;
    return [
      {
        name: "messages/s, whole pipeline, 100 group sessions",
        ours: total / seconds,
        baselineName: "fake model alone, 100 concurrent",
        baseline: total / fakeSeconds,
        unit: "msg/s",
        note: `${total} messages, each journaled (fsync) and transcribed`,
      },
    ];
  } finally {
    await fake.close();
    await rm(stateDir, { recursive: true, force: true });
  }
}

/** Spawns a command, resolves with ms until a line matching `ready` appears on stdout or stderr, plus the child. */
function startAndWait(args: string[], env: NodeJS.ProcessEnv, ready: RegExp) {
  const start = performance.now();
  const child = spawn(process.execPath, args, { env, stdio: ["ignore", "pipe", "pipe"] });
  return new Promise<{ ms: number; child: typeof child }>((resolve, reject) => {
    let buffer = "";
    const onData = (chunk: Buffer) => {
      buffer += chunk.toString();
      if (ready.test(buffer)) resolve({ ms: performance.now() - start, child });
    };
    child.stdout.on("data", onData);
    child.stderr.on("data", onData);
    child.on("exit", (code) => reject(new Error(`exited ${code} before ready: ${buffer}`)));
  });
}

async function rssKb(pid: number): Promise<number> {
  const status = await readFile(`/proc/${pid}/status`, "utf8");
  const match = /VmRSS:\s+(\d+) kB/.exec(status);
  return match ? Number(match[1]) : Number.NaN;
}

function stopChild(child: ReturnType<typeof spawn>): Promise<void> {
  return new Promise((resolve) => {
    child.once("exit", () => resolve());
    child.kill("SIGTERM");
  });
}

async function benchStartup(): Promise<BenchRow[]> {
  const stateDir = await mkdtemp(join(tmpdir(), "clawdis-bench-start-"));
  const env = { ...process.env, CLAWDIS_STATE_DIR: stateDir, HOME: stateDir };
  await writeFile(join(stateDir, "clawdis.json"), JSON.stringify({ gateway: { port: 0 } }));
  const trivial = join(stateDir, "trivial.mjs");
  await writeFile(
    trivial,
    `import http from "node:http"; const s = http.createServer((q, r) => r.end("ok")); s.listen(0, "127.0.0.1", () => console.error("listening on " + s.address().port)); process.on("SIGTERM", () => s.close(() => process.exit(0)));`,
  );
  try {
    const ours: number[] = [];
    const base: number[] = [];
    for (let i = 0; i < 5; i++) {
      const g = await startAndWait([bin, "gateway"], env, /listening on http/);
      ours.push(g.ms);
      await stopChild(g.child);
      const t = await startAndWait([trivial], env, /listening on/);
      base.push(t.ms);
      await stopChild(t.child);
    }
    // Resident memory after 10 s idle, both started the same way.
    const g = await startAndWait([bin, "gateway"], env, /listening on http/);
    const t = await startAndWait([trivial], env, /listening on/);
    await new Promise((r) => setTimeout(r, 10_000));
    const gRss = await rssKb(g.child.pid!);
    const tRss = await rssKb(t.child.pid!);
    await stopChild(g.child);
    await stopChild(t.child);

    const cold = async (args: string[]) => {
      const times: number[] = [];
      for (let i = 0; i < 7; i++) {
        const start = performance.now();
        await new Promise<void>((resolve, reject) => {
          const child = spawn(process.execPath, args, { env, stdio: "ignore" });
          child.on("exit", (code) =>
            code === 0 ? resolve() : reject(new Error(`${args.join(" ")} exited ${code}`)),
          );
        });
        times.push(performance.now() - start);
      }
      return median(times);
    };
    const nodeBaseline = await cold(["-e", "0"]);
    const version = await cold([bin, "--version"]);
    const sessions = await cold([bin, "sessions", "--json"]);
    return [
      {
        name: "clawdis gateway: start → listening",
        ours: median(ours),
        baselineName: "trivial node http server",
        baseline: median(base),
        unit: "ms",
        note: "OpenClaw: ~3,700 ms",
      },
      {
        name: "clawdis gateway: RSS after 10 s idle",
        ours: gRss / 1024,
        baselineName: "trivial node http server",
        baseline: tRss / 1024,
        unit: "MB",
        note: "OpenClaw: ~940 MB",
      },
      {
        name: "clawdis --version (cold)",
        ours: version,
        baselineName: "node -e 0",
        baseline: nodeBaseline,
        unit: "ms",
      },
      {
        name: "clawdis sessions --json, empty store (cold)",
        ours: sessions,
        baselineName: "node -e 0",
        baseline: nodeBaseline,
        unit: "ms",
      },
    ];
  } finally {
    await rm(stateDir, { recursive: true, force: true });
  }
}

export async function benchGateway(): Promise<BenchRow[]> {
  const only = process.env.CLAWDIS_BENCH_ONLY;
  const rows: BenchRow[] = [];
  if (!only || only === "overhead") rows.push(...(await benchOverhead()));
  if (!only || only === "throughput") rows.push(...(await benchThroughput()));
  if (!only || only === "startup") rows.push(...(await benchStartup()));
  return rows;
}
