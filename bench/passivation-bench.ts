/**
 * Memory benchmarks (issues 11 and 12): the real `clawdis gateway` with a model configured (the fake model server
 * in another process) on a store of 10,000 sessions that exist (store entries and transcripts). Each round starts
 * two gateways on fresh copies of that state, one after the other:
 * - with the default `passivateAfterMinutes` (60: nothing is unloaded during the run): resident memory (VmRSS) and
 *   its peak (VmHWM, from /proc/<pid>/status) after one message to each of the 10,000 sessions, against the same
 *   after one message to each of 10 of them;
 * - with `passivateAfterMinutes` 0.01 (0.6 s idle, then the 5 s grace period): resident memory once all 10,000
 *   were touched once and unloaded, against once 10 were.
 * Messages go through `POST /api/agent`, 16 in flight.
 */
import { cp, mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import {
  AgentClient,
  type GatewayProcess,
  gatewayConfig,
  gaveBack,
  memoryMb,
  modelArrival,
  pool,
  seededKey,
  seedSessions,
  startGateway,
  startModelServer,
} from "./bench-processes.js";
import { type BenchRow, median } from "./bench-row.js";

/** Rounds of the bench; `CLAWDIS_BENCH_ROUNDS` lowers it while working on it (the table needs at least 5). */
const ROUNDS = Number(process.env.CLAWDIS_BENCH_ROUNDS ?? 5);
const SESSIONS = 10_000;
const FEW = 10;
const IN_FLIGHT = 16;
/** How long after the last message memory is read (background writes of the last turns finish). */
const SETTLE_MS = 1000;
/** At most this long after the last of 10,000 messages for the gateway to give the burst's memory back. */
const GIVE_BACK_WAIT_MS = 30_000;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function message(client: AgentClient, from: number, to: number): Promise<void> {
  await pool(to - from, IN_FLIGHT, async (i) => {
    modelArrival(await client.post(`hello ${from + i}`, seededKey("room", from + i)));
  });
}

/** Until the gateway logged `count` unloads (a timeout says how far it got). */
async function unloaded(gateway: GatewayProcess, count: number): Promise<void> {
  const deadline = Date.now() + 120_000;
  while (gateway.count("idle session unloaded") < count) {
    if (Date.now() > deadline) {
      throw new Error(`only ${gateway.count("idle session unloaded")} of ${count} sessions were unloaded`);
    }
    await sleep(200);
  }
}

export async function benchPassivation(): Promise<BenchRow[]> {
  const root = await mkdtemp(join(tmpdir(), "clawdis-bench-memory-"));
  const model = await startModelServer();
  const template = join(root, "template");
  await seedSessions(template, { prefix: "room", count: SESSIONS, messages: 20 });
  const warm = {
    few: [] as number[],
    many: [] as number[],
    fewPeak: [] as number[],
    manyPeak: [] as number[],
  };
  const passive = { few: [] as number[], many: [] as number[], manyPeak: [] as number[] };
  try {
    for (let round = 0; round < ROUNDS; round++) {
      for (const kind of ["warm", "passive"] as const) {
        const stateDir = join(root, `${kind}-${round}`);
        await cp(template, stateDir, { recursive: true });
        const session = kind === "passive" ? { passivateAfterMinutes: 0.01 } : {};
        const gateway = await startGateway(stateDir, gatewayConfig(model.url, session));
        const client = new AgentClient(gateway.url, gateway.token);
        try {
          await message(client, 0, FEW);
          if (kind === "passive") await unloaded(gateway, FEW);
          await sleep(SETTLE_MS);
          const few = await memoryMb(gateway.pid);
          await message(client, FEW, SESSIONS);
          if (kind === "passive") await unloaded(gateway, SESSIONS);
          // Read once the burst's memory was given back (the gateway does that once nothing happened for a while):
          // the collection after the last message (warm) or the last unload (passive).
          const compacted = gateway.count("compact=true");
          await gaveBack(gateway, compacted, GIVE_BACK_WAIT_MS);
          await sleep(SETTLE_MS);
          const many = await memoryMb(gateway.pid);
          if (kind === "warm") {
            warm.few.push(few.rss);
            warm.many.push(many.rss);
            warm.fewPeak.push(few.peak);
            warm.manyPeak.push(many.peak);
          } else {
            passive.few.push(few.rss);
            passive.many.push(many.rss);
            passive.manyPeak.push(many.peak);
          }
        } finally {
          client.close();
          await gateway.stop();
          await rm(stateDir, { recursive: true, force: true });
        }
      }
    }
    return [
      {
        name: "gateway RSS after one message to each of 10,000 sessions",
        unit: "MB",
        ours: warm.many,
        baselineName: "after one message to each of 10",
        baseline: warm.few,
        target: { kind: "ratio", max: 1.3 },
        note: `10,000 sessions in the store, model configured, passivateAfterMinutes 60 (all still warm); ${IN_FLIGHT} in flight`,
      },
      {
        name: "gateway peak RSS (VmHWM), same run",
        unit: "MB",
        ours: warm.manyPeak,
        baselineName: "peak after 10",
        baseline: warm.fewPeak,
        target: { kind: "below", max: 200 },
      },
      {
        name: "gateway RSS after 10,000 sessions touched once and unloaded",
        unit: "MB",
        ours: passive.many,
        baselineName: "after 10 touched and unloaded",
        baseline: passive.few,
        target: { kind: "ratio", max: 1.5 },
        note: `passivateAfterMinutes 0.01; peak ${median(passive.manyPeak).toFixed(0)} MB`,
      },
    ];
  } finally {
    await model.stop();
    await rm(root, { recursive: true, force: true });
  }
}
