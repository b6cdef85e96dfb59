/**
 * `node dist/bench/compare-builds.js <checkout>`: this build against another one, on the parts of `npm run bench`
 * that a change to the runtime moves. `<checkout>` is a built clawdis checkout of another commit (`git worktree
 * add ../before <commit>`, then `npm install` or `npx tsc --noCheck && node dist/scripts/bundle.js` in it); its
 * `bin/clawdis.js` is started. The parts, each with both builds round by round in turn (the order rotating, so
 * neither always runs on a machine the other warmed or loaded):
 * - messages per second into 100 group sessions with an instant model, and the gateway's CPU per message;
 * - hand-in → model request on 1,000 sessions in use (sequential messages: each round's median and p99), hand-in →
 *   reply (each round's median), and CPU;
 * - `clawdis sessions --json` cold on a 10,000-key store, and the gateway's start → listening (a model and
 *   Telegram configured).
 * The table's "ours" is this build and the baseline the other. There are no targets: "no slower" is read from the
 * ratio against the spread of the rounds (min–max of each side), which is the machine's, not the code's.
 * `CLAWDIS_COMPARE_ROUNDS` (default 8) sets the rounds of each part; `CLAWDIS_COMPARE_ONLY=throughput|latency|commands`
 * runs one part.
 */
import { existsSync } from "node:fs";
import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { startFakeOpenAI } from "../test/fakes/openai-server.js";
import { FakeTelegram } from "../test/fakes/telegram-server.js";
import {
  AgentClient,
  CLAWDIS_BIN,
  cpuMs,
  type GatewayProcess,
  gatewayConfig,
  gaveBack,
  modelArrival,
  ms,
  pool,
  seededKey,
  seedSessions,
  startGateway,
  startModelServer,
} from "./bench-processes.js";
import { type BenchRow, formatTable, median, percentile } from "./bench-row.js";
import { freePort, run, startState, storeText, timeToListen } from "./startup-bench.js";

const ROUNDS = Number(process.env.CLAWDIS_COMPARE_ROUNDS ?? 8);
/** At most this long after the sessions were put in use for a build's gateway to give the burst's memory back. */
const GIVE_BACK_WAIT_MS = 15_000;

interface Build {
  name: string;
  bin: string;
}

/**
 * Runs `measure` for every build, `ROUNDS` times each after one unrecorded round, the builds' order rotating by
 * one each round. Returns each build's recorded results, in the order of `builds`.
 */
async function rotating<T>(builds: readonly Build[], measure: (build: number) => Promise<T>): Promise<T[][]> {
  const results: T[][] = builds.map(() => []);
  for (let round = -1; round < ROUNDS; round++) {
    for (let k = 0; k < builds.length; k++) {
      const index = (k + Math.max(round, 0)) % builds.length;
      const result = await measure(index);
      if (round >= 0) results[index]!.push(result);
    }
  }
  return results;
}

/**
 * The other build's gateway. A config key it does not know yet (`session.titles` came later) is left out: it
 * refuses the file (exit 2) naming the key, and without the key it behaves as the bench wants.
 */
async function startFor(build: Build, stateDir: string, config: unknown): Promise<GatewayProcess> {
  try {
    return await startGateway(stateDir, config, { bin: build.bin });
  } catch (error) {
    if (!String(error).includes("session.titles: unknown key")) throw error;
    const older = JSON.parse(JSON.stringify(config)) as {
      inbound: { reply: { session: Record<string, unknown> } };
    };
    delete older.inbound.reply.session.titles;
    return await startGateway(stateDir, older, { bin: build.bin });
  }
}

/** A row per spec: its figure picked from each round's result, this build's against the other's. */
function rowsOf<T>(
  builds: readonly Build[],
  results: T[][],
  specs: [name: string, unit: string, pick: (result: T) => number, note: string][],
): BenchRow[] {
  return specs.map(([name, unit, pick, note]) => ({
    name,
    unit,
    ours: results[0]!.map(pick),
    baselineName: builds[1]!.name,
    baseline: results[1]!.map(pick),
    note,
  }));
}

/**
 * One gateway per build on a state directory of its own seeded with `sessions` sessions, a client for each; runs
 * `part` with them and stops them (also when it fails).
 */
async function withGateways<T>(
  builds: readonly Build[],
  dir: string,
  sessions: number,
  modelUrl: string,
  part: (gateways: GatewayProcess[], clients: AgentClient[]) => Promise<T>,
): Promise<T> {
  const gateways: GatewayProcess[] = [];
  try {
    for (const [i, build] of builds.entries()) {
      const stateDir = join(dir, `build-${i}`);
      await seedSessions(stateDir, { prefix: "room", count: sessions, messages: 20 });
      gateways.push(await startFor(build, stateDir, gatewayConfig(modelUrl)));
    }
    const clients = gateways.map((g) => new AgentClient(g.url, g.token));
    try {
      return await part(gateways, clients);
    } finally {
      for (const client of clients) client.close();
    }
  } finally {
    for (const gateway of gateways) await gateway.stop();
  }
}

async function throughput(builds: readonly Build[], root: string, modelUrl: string): Promise<BenchRow[]> {
  const total = 2000;
  return withGateways(builds, join(root, "throughput"), 100, modelUrl, async (gateways, clients) => {
    let round = 0;
    const results = await rotating(builds, async (b) => {
      const gateway = gateways[b]!;
      const cpuBefore = await cpuMs(gateway.pid);
      const mainBefore = await cpuMs(gateway.pid, "main");
      const start = process.hrtime.bigint();
      const at = round++;
      await pool(100, 100, async (s) => {
        for (let m = 0; m < total / 100; m++) {
          modelArrival(await clients[b]!.post(`round ${at} message ${m}`, seededKey("room", s)));
        }
      });
      const rate = total / (ms(start, process.hrtime.bigint()) / 1000);
      const main = ((await cpuMs(gateway.pid, "main")) - mainBefore) / total;
      return { rate, cpu: ((await cpuMs(gateway.pid)) - cpuBefore) / total, main };
    });
    const note = `${total} messages a round, 100 in flight (one per session)`;
    const cpuNote = "from /proc (user + system, every thread)";
    return rowsOf(builds, results, [
      ["messages/s into 100 group sessions, instant model", "msg/s", (x) => x.rate, note],
      ["gateway CPU per message, same rounds", "ms", (x) => x.cpu, cpuNote],
      [
        "gateway main-thread CPU per message, same rounds",
        "ms",
        (x) => x.main,
        "the thread JavaScript runs on",
      ],
    ]);
  });
}

async function latency(builds: readonly Build[], root: string, modelUrl: string): Promise<BenchRow[]> {
  const sessions = 1000;
  const perRound = 300;
  return withGateways(builds, join(root, "latency"), sessions, modelUrl, async (gateways, clients) => {
    // In use: every session messaged twice (its first message after a start opens and reads its transcript).
    // Loading them is a burst, which ends in collections that give its memory back (pauses of 30-150 ms): the
    // rounds start after every build's, so that neither build's lands in the rounds.
    const compacted = gateways.map((g) => g.count("compact=true"));
    for (const client of clients) {
      for (let pass = 0; pass < 2; pass++) {
        for (let i = 0; i < sessions; i++)
          modelArrival(await client.post(`warm ${pass} ${i}`, seededKey("room", i)));
      }
    }
    for (const [b, gateway] of gateways.entries()) {
      // A build that does not log it (older than the collections) is not waited for.
      await gaveBack(gateway, compacted[b]!, GIVE_BACK_WAIT_MS).catch(() =>
        process.stderr.write(
          `compare: ${builds[b]!.name} did not log its burst's collection; not waited for\n`,
        ),
      );
    }
    let next = 0;
    const results = await rotating(builds, async (b) => {
      const gateway = gateways[b]!;
      const cpuBefore = await cpuMs(gateway.pid);
      const mainBefore = await cpuMs(gateway.pid, "main");
      const toModel: number[] = [];
      const toReply: number[] = [];
      for (let n = 0; n < perRound; n++) {
        const i = next++;
        const answer = await clients[b]!.post(`message ${i} about the plan`, seededKey("room", i % sessions));
        toModel.push(ms(answer.sentAt, modelArrival(answer)));
        toReply.push(ms(answer.sentAt, answer.doneAt));
      }
      const cpu = ((await cpuMs(gateway.pid)) - cpuBefore) / perRound;
      const main = ((await cpuMs(gateway.pid, "main")) - mainBefore) / perRound;
      return { p50: median(toModel), p99: percentile(toModel, 99), reply: median(toReply), cpu, main };
    });
    const note = `${perRound} sequential messages a round, ${sessions} sessions in use`;
    const cpuNote = "from /proc; includes the work written behind";
    return rowsOf(builds, results, [
      ["hand-in → model request p50 (of each round)", "ms", (x) => x.p50, note],
      ["hand-in → model request p99 (of each round)", "ms", (x) => x.p99, note],
      ["hand-in → reply p50 (of each round)", "ms", (x) => x.reply, note],
      ["gateway CPU per message, same rounds", "ms", (x) => x.cpu, cpuNote],
      ["gateway main-thread CPU per message, same rounds", "ms", (x) => x.main, cpuNote],
    ]);
  });
}

async function commands(builds: readonly Build[], root: string): Promise<BenchRow[]> {
  const state = join(root, "cli-state");
  await mkdir(join(state, "sessions"), { recursive: true });
  await writeFile(join(state, "sessions", "sessions.json"), storeText(Date.now()));
  const env: NodeJS.ProcessEnv = { ...process.env, CLAWDIS_STATE_DIR: state, HOME: root };
  delete env.CLAWDIS_CONFIG_PATH;
  const json = await rotating(builds, async (b) => run([builds[b]!.bin, "sessions", "--json"], env).ms);

  const fake = await startFakeOpenAI();
  const telegram = await FakeTelegram.start();
  try {
    const port = await freePort();
    // A state directory per build (neither reads what the other wrote), each restarted round after round.
    const envs: NodeJS.ProcessEnv[] = [];
    for (const [i] of builds.entries())
      envs.push(await startState(join(root, `start-state-${i}`), port, fake.url, telegram));
    const start = await rotating(builds, (b) => timeToListen([builds[b]!.bin, "gateway"], envs[b]!, port));
    const each = (ms: number) => ms;
    return [
      ...rowsOf(builds, json, [["clawdis sessions --json, cold, 10k keys", "ms", each, "no config file"]]),
      ...rowsOf(builds, start, [
        ["clawdis gateway: start → listening", "ms", each, "a model and Telegram configured"],
      ]),
    ];
  } finally {
    await fake.close();
    await telegram.close();
  }
}

async function main(): Promise<void> {
  const other = process.argv[2];
  if (!other) {
    process.stderr.write("usage: node dist/bench/compare-builds.js <other built checkout>\n");
    process.exit(2);
  }
  const otherBin = join(resolve(other), "bin", "clawdis.js");
  if (!existsSync(join(resolve(other), "dist"))) {
    process.stderr.write(
      `compare-builds: ${other} has no dist/: build it first (npm install, or npm run build)\n`,
    );
    process.exit(2);
  }
  const builds: Build[] = [
    { name: `this build (${dirname(dirname(CLAWDIS_BIN))})`, bin: CLAWDIS_BIN },
    { name: `other build (${resolve(other)})`, bin: otherBin },
  ];
  const root = await mkdtemp(join(tmpdir(), "clawdis-compare-"));
  const model = await startModelServer();
  const rows: BenchRow[] = [];
  try {
    const only = process.env.CLAWDIS_COMPARE_ONLY;
    const parts = [
      { name: "throughput", run: () => throughput(builds, root, model.url) },
      { name: "latency", run: () => latency(builds, root, model.url) },
      { name: "commands", run: () => commands(builds, root) },
    ];
    for (const part of parts) {
      if (only !== undefined && only !== part.name) continue;
      process.stderr.write(`compare: ${part.name}…\n`);
      rows.push(...(await part.run()));
    }
  } finally {
    await model.stop();
    await rm(root, { recursive: true, force: true });
  }
  process.stdout.write(`${formatTable(rows)}\n`);
}

await main();
