/**
 * Gateway benchmarks (issue 12, the per-message path), all through the real `clawdis gateway` over HTTP ingress
 * (`POST /api/agent`, keep-alive) to the fake model server in another process (bench/model-server-process.ts,
 * which stamps each answer with the request's arrival on the monotonic clock):
 * - hand-in → model request on 1,000 sessions that exist and are in use (each messaged twice before the measured
 *   rounds, the first of them reported as its own row: a session's first message after a start opens and reads
 *   its transcript): p99 against the bare relay (bench/relay-process.ts: the same POST, the same request to the
 *   same model server), p50 against a journal append + fsync (the journal's own `accept`, measured in this process
 *   in the same run);
 * - the same messages timed inside the gateway of 1,000 sessions and inside the relay, from the request coming in
 *   to the model request going out (bench/request-spans.ts): the part of the row that is the process's own work;
 * - hand-in → reply: with a 10,000-key store against a 10-key store (the reply does not wait for the store);
 * - cost per message against the number of sessions (10 / 1,000 / 10,000 in the store);
 * - messages per second into 100 group sessions with an instant model, against the relay.
 * Every side runs in the same rounds, round by round in turn, one side at a time.
 * `CLAWDIS_BENCH_ONLY=latency|throughput` runs one part.
 */
import { mkdir, mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { silentLogger } from "../src/core/logger.js";
import { Journal } from "../src/sessions/journal.js";
import {
  AgentClient,
  cpuMs,
  type GatewayProcess,
  gatewayConfig,
  gaveBack,
  modelArrival,
  ms,
  pool,
  readSpans,
  seededKey,
  seedSessions,
  startGateway,
  startModelServer,
  startRelay,
} from "./bench-processes.js";
import { type BenchRow, interleaved, median, percentile } from "./bench-row.js";

const ROUNDS = 5;
const PER_ROUND = 300;
const WARMUP = 1;
/** Messages to each of the 1,000 sessions before the measured rounds: from a session's second turn on it is warm. */
const IN_USE_PASSES = 2;
/** At most this long after the sessions were put in use for the gateway to give the burst's memory back. */
const GIVE_BACK_WAIT_MS = 30_000;

interface Side {
  name: string;
  toModel: number[];
  reply: number[];
  /** The `x-bench-id` of each recorded message, in the order of `toModel` (the spans of bench/request-spans.ts). */
  ids: string[];
  /** One message; `record` false during the warm-up round. */
  send(i: number, record: boolean): Promise<void>;
}

/** A side that posts to `client` on session `keyOf(i)` and records both latencies. */
function postingSide(name: string, client: AgentClient, keyOf: (i: number) => string): Side {
  const side: Side = {
    name,
    toModel: [],
    reply: [],
    ids: [],
    send: async (i, record) => {
      const id = `${name}:${i}`;
      const answer = await client.post(`message ${i} about the plan`, keyOf(i), id);
      const at = modelArrival(answer);
      if (!record) return;
      side.ids.push(id);
      side.toModel.push(ms(answer.sentAt, at));
      side.reply.push(ms(answer.sentAt, answer.doneAt));
    },
  };
  return side;
}

const p = (values: number[], q: number) => percentile(values, q).toFixed(2);

/** Per message, what of hand-in → model request was not inside the process (`toModel` and `inside` in one order). */
const outside = (toModel: number[], inside: number[]) => toModel.map((t, i) => t - (inside[i] ?? Number.NaN));

/** The spans (ms) of `side`'s recorded messages in the process that wrote `spans`. */
function spansOf(side: Side, spans: Map<string, number>): number[] {
  return side.ids.map((id) => {
    const span = spans.get(id);
    if (span === undefined) throw new Error(`no request span for ${id}`);
    return span;
  });
}

async function benchLatency(): Promise<BenchRow[]> {
  const root = await mkdtemp(join(tmpdir(), "clawdis-bench-latency-"));
  // The gateways and the relay time their own part of each message (bench/request-spans.ts; the row reads the
  // gateway of 1,000 sessions, and every gateway runs the preload so that the rows comparing them stay fair).
  const spansDir = join(root, "spans");
  await mkdir(spansDir);
  const model = await startModelServer();
  const relay = await startRelay(model.url, { spans: spansDir });
  const gateways: GatewayProcess[] = [];
  const journal = new Journal({ dir: join(root, "journal-baseline"), logger: silentLogger });
  try {
    const sizes = [10, 1000, 10_000];
    const sides: Side[] = [];
    const cpu: Record<number, { gateway: GatewayProcess }> = {};
    for (const size of sizes) {
      const stateDir = join(root, `k${size}`);
      await seedSessions(stateDir, { prefix: "room", count: size, messages: 20 });
      const gateway = await startGateway(stateDir, gatewayConfig(model.url), { spans: spansDir });
      gateways.push(gateway);
      cpu[size] = { gateway };
      const client = new AgentClient(gateway.url, gateway.token);
      sides.push(postingSide(`${size}`, client, (i) => seededKey("room", i % size)));
    }
    const relaySide = postingSide("relay", new AgentClient(relay.url), (i) => seededKey("room", i % 1000));
    await journal.openJournal();
    const fsyncs: number[] = [];
    let jn = 0;
    const journalAppend = async (record: boolean) => {
      const start = process.hrtime.bigint();
      await journal.accept(
        {
          channel: "api",
          chatId: "api:bench",
          chatType: "direct",
          senderId: "local",
          messageId: `j${jn++}`,
          text: `message ${jn} about the plan`,
          receivedAt: Date.now(),
        },
        Date.now(),
        { local: true },
      );
      if (record) fsyncs.push(ms(start, process.hrtime.bigint()));
    };
    const [g10, g1k, g10k] = sides as [Side, Side, Side];
    // The 1,000 sessions put in use: every one messaged IN_USE_PASSES times, the first pass (each session's first
    // message since the gateway started) kept for its own row.
    const g1kGateway = cpu[1000]!.gateway;
    const putInUse = new AgentClient(g1kGateway.url, g1kGateway.token);
    const firstMessages = postingSide("first messages", putInUse, (i) => seededKey("room", i % 1000));
    for (let pass = 0; pass < IN_USE_PASSES; pass++) {
      for (let i = 0; i < 1000; i++) await firstMessages.send(i, pass === 0);
    }
    putInUse.close();
    // Loading 1,000 sessions is a burst: the collections that give its memory back (pauses of 30-150 ms) come
    // before the rounds, which measure sessions in use.
    await gaveBack(g1kGateway, 0, GIVE_BACK_WAIT_MS);
    const cpuUsed: Record<number, number> = { 10: 0, 1000: 0, 10000: 0 };
    /** One round of one side: PER_ROUND messages one after another (the gateway's CPU counted). */
    const round = async (side: Side | "journal", size: number | undefined, from: number, record: boolean) => {
      const gateway = size === undefined ? undefined : cpu[size]?.gateway;
      const before = gateway ? await cpuMs(gateway.pid) : 0;
      for (let n = 0; n < PER_ROUND; n++) {
        if (side === "journal") await journalAppend(record);
        else await side.send(from + n, record);
      }
      if (gateway && size !== undefined && record) cpuUsed[size]! += (await cpuMs(gateway.pid)) - before;
    };
    // Round by round in turn (every side sees the same machine), and one side at a time: one gateway's writes in
    // the background never land in another side's figures.
    for (let r = -WARMUP; r < ROUNDS; r++) {
      const record = r >= 0;
      const from = (r + WARMUP) * PER_ROUND;
      await round(g1k, 1000, from, record);
      await round(relaySide, undefined, from, record);
      await round("journal", undefined, from, record);
      await round(g10, 10, from, record);
      await round(g10k, 10_000, from, record);
    }
    const messages = ROUNDS * PER_ROUND;
    const cpuPer: Record<number, string> = {};
    for (const size of sizes) cpuPer[size] = (cpuUsed[size]! / messages).toFixed(2);
    const n = `${ROUNDS} rounds x ${PER_ROUND} sequential messages, the sides round by round in turn`;
    // The spans are written at exit.
    await g1kGateway.stop();
    await relay.stop();
    const inGateway = spansOf(g1k, await readSpans(spansDir, g1kGateway.pid));
    const inRelay = spansOf(relaySide, await readSpans(spansDir, relay.pid));
    return [
      {
        name: "hand-in → model request, 1,000 sessions in use",
        unit: "ms",
        ours: g1k.toModel,
        baselineName: "bare relay, same HTTP hops",
        baseline: relaySide.toModel,
        target: { kind: "ratio", max: 2, on: "p99" },
        note: `p50 ${p(g1k.toModel, 50)} vs relay ${p(relaySide.toModel, 50)} ms; ${n}; gateway CPU ${cpuPer[1000]} ms/msg`,
      },
      {
        name: "hand-in → model request p50, 1,000 sessions in use",
        unit: "ms",
        ours: g1k.toModel,
        baselineName: "journal append + fsync",
        baseline: fsyncs,
        target: { kind: "ratio", max: 2 },
        note: `fsync p99 ${p(fsyncs, 99)} ms (Journal.accept in the bench process)`,
      },
      {
        name: "inside the process: request in → model request out",
        unit: "ms",
        ours: inGateway,
        baselineName: "the same in the bare relay",
        baseline: inRelay,
        note: `the messages of the rows above, timed in the gateway of 1,000 sessions and in the relay (Node's http diagnostics channels, bench/request-spans.ts); the rest of hand-in → model request (p50 ${p(outside(g1k.toModel, inGateway), 50)} vs ${p(outside(relaySide.toModel, inRelay), 50)} ms) is the HTTP hops and the wait for the process to take the request`,
      },
      {
        name: "hand-in → model request p50, a session's first message",
        unit: "ms",
        ours: firstMessages.toModel,
        baselineName: "the same sessions in use",
        baseline: g1k.toModel,
        note: `each of the 1,000 sessions once, right after the gateway started: its transcript opened and read from disk; p99 ${p(firstMessages.toModel, 99)} ms`,
      },
      {
        name: "hand-in → reply, 1,000 sessions",
        unit: "ms",
        ours: g1k.reply,
        baselineName: "bare relay, same HTTP hops",
        baseline: relaySide.reply,
        note: `p99 ${p(g1k.reply, 99)} vs relay ${p(relaySide.reply, 99)} ms`,
      },
      {
        name: "hand-in → reply, 10,000-key store",
        unit: "ms",
        ours: g10k.reply,
        baselineName: "same, 10-key store",
        baseline: g10.reply,
        target: { kind: "ratio", max: 1.5 },
        note: `p99 ${p(g10k.reply, 99)} vs ${p(g10.reply, 99)} ms: the reply does not wait for the store rewrite`,
      },
      {
        name: "cost per message (to model), 1,000 sessions",
        unit: "ms",
        ours: g1k.toModel,
        baselineName: "10 sessions",
        baseline: g10.toModel,
        target: { kind: "ratio", max: 1.5 },
        note: `gateway CPU ${cpuPer[1000]} vs ${cpuPer[10]} ms/msg`,
      },
      {
        name: "cost per message (to model), 10,000 sessions",
        unit: "ms",
        ours: g10k.toModel,
        baselineName: "10 sessions",
        baseline: g10.toModel,
        target: { kind: "ratio", max: 1.5 },
        note: `gateway CPU ${cpuPer[10000]} vs ${cpuPer[10]} ms/msg; each of the 10,000 messaged at most once`,
      },
    ];
  } finally {
    await journal.close().catch(() => {});
    for (const gateway of gateways) await gateway.stop();
    await relay.stop();
    await model.stop();
    await rm(root, { recursive: true, force: true });
  }
}

/**
 * What the processes of one side of the throughput part used over its measured rounds: the server (gateway or
 * relay), the model server and the bench's client, which share the machine's cores. The rate follows their sum:
 * on two cores it is at most 2 / (sum of the three) messages a millisecond.
 */
export class ProcessesCpu {
  private messages = 0;
  private readonly ms = [0, 0, 0];

  add(messages: number, server: number, model: number, client: number): void {
    this.messages += messages;
    this.ms[0]! += server;
    this.ms[1]! += model;
    this.ms[2]! += client;
  }

  /** Per message, e.g. "0.80 + 0.28 + 0.22 = 1.30". */
  text(): string {
    if (this.messages === 0) return "none measured";
    const per = this.ms.map((total) => total / this.messages);
    const sum = per.reduce((a, b) => a + b, 0);
    return `${per.map((x) => x.toFixed(2)).join(" + ")} = ${sum.toFixed(2)}`;
  }
}

async function benchThroughput(): Promise<BenchRow[]> {
  const root = await mkdtemp(join(tmpdir(), "clawdis-bench-throughput-"));
  const model = await startModelServer();
  const relay = await startRelay(model.url);
  let gateway: GatewayProcess | undefined;
  try {
    const stateDir = join(root, "state");
    await seedSessions(stateDir, { prefix: "room", count: 100, messages: 20 });
    gateway = await startGateway(stateDir, gatewayConfig(model.url));
    const ours = new AgentClient(gateway.url, gateway.token);
    const base = new AgentClient(relay.url);
    const total = 2000;
    const sessions = 100;
    let round = 0;
    const server = gateway;
    /** CPU (ms) of the three processes that share the cores, over the measured rounds of each side. */
    const cpu = { ours: new ProcessesCpu(), relay: new ProcessesCpu() };
    /** `total` messages, one worker per session (each session's messages one after another). */
    const run = async (client: AgentClient, side: "ours" | "relay"): Promise<number> => {
      const pids = [side === "ours" ? server.pid : relay.pid, model.pid];
      const before = await Promise.all(pids.map((pid) => cpuMs(pid)));
      const self = process.cpuUsage();
      const start = process.hrtime.bigint();
      const at = round++;
      await pool(sessions, sessions, async (s) => {
        for (let m = 0; m < total / sessions; m++) {
          modelArrival(await client.post(`round ${at} message ${m}`, seededKey("room", s)));
        }
      });
      const rate = total / (ms(start, process.hrtime.bigint()) / 1000);
      const used = process.cpuUsage(self);
      const after = await Promise.all(pids.map((pid) => cpuMs(pid)));
      if (at >= 2 * WARMUP) {
        cpu[side].add(
          total,
          after[0]! - before[0]!,
          after[1]! - before[1]!,
          (used.user + used.system) / 1000,
        );
      }
      return rate;
    };
    const result = await interleaved(
      ROUNDS,
      () => run(ours, "ours"),
      () => run(base, "relay"),
      WARMUP,
    );
    ours.close();
    base.close();
    return [
      {
        name: "messages/s into 100 group sessions, instant model",
        unit: "msg/s",
        ours: result.ours,
        baselineName: "bare relay, same HTTP hops",
        baseline: result.baseline,
        target: { kind: "ratio-above", min: 0.6 },
        note: `${total} messages a round, 100 in flight (one per session); CPU ms/msg of gateway, model server, client: ${cpu.ours.text()}; relay's: ${cpu.relay.text()}; median ${median(result.ours).toFixed(0)}`,
      },
    ];
  } finally {
    await gateway?.stop();
    await relay.stop();
    await model.stop();
    await rm(root, { recursive: true, force: true });
  }
}

export async function benchGateway(): Promise<BenchRow[]> {
  const only = process.env.CLAWDIS_BENCH_ONLY;
  const rows: BenchRow[] = [];
  if (!only || only === "latency") rows.push(...(await benchLatency()));
  if (!only || only === "throughput") rows.push(...(await benchThroughput()));
  return rows;
}
