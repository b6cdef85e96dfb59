/**
 * The search benchmark (issue 34): `clawdis sessions search` over 1 GiB of generated transcripts, against
 * `grep -F -c` over the same files, interleaved round by round; the files are written to a temp state directory
 * first (a warm page cache for both sides) and deleted afterwards.
 * - time for the whole corpus (ms): the real binary, process start included, with a `--limit` above the number of
 *   hits so that every byte is read; its hits are checked against grep's count every round. Target: at least half
 *   of grep's throughput, i.e. at most 2x its time;
 * - peak memory of the search process (VmHWM, read at its exit by bench/report-hwm.ts): under 100 MB.
 * `CLAWDIS_BENCH_SEARCH_MB` sets the corpus size (default 1024) and `CLAWDIS_BENCH_ROUNDS` the rounds (default 5)
 * while working on it.
 */
import { spawn } from "node:child_process";
import { mkdir, mkdtemp, open, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { type BenchRow, interleaved, median } from "./bench-row.js";

const MiB = 1024 * 1024;
const CORPUS_MB = Number(process.env.CLAWDIS_BENCH_SEARCH_MB ?? 1024);
const ROUNDS = Number(process.env.CLAWDIS_BENCH_ROUNDS ?? 5);
/** Transcripts the corpus is split into (sessions of 64 MiB each at the default size). */
const FILES = 16;
/** The word searched for, planted every PLANT_EVERY messages (the rest never contains it). */
const WORD = "kumquat";
const PLANT_EVERY = 20_000;

/** dist/bench/search-bench.js → the checkout. */
const distBench = dirname(fileURLToPath(import.meta.url));
const repoRoot = join(distBench, "..", "..");
const bin = join(repoRoot, "bin", "clawdis.js");

const WORDS =
  "the agent read the file and answered with a short summary of what changed since yesterday in the notes".split(
    " ",
  );

/** One message line as the gateway writes it; every PLANT_EVERY-th holds the word (in a JSON-escaped string). */
function line(n: number): string {
  const words: string[] = [];
  for (let i = 0; i < 40; i++) words.push(WORDS[(n * 7 + i * 3) % WORDS.length]!);
  if (n % PLANT_EVERY === 0) words.splice(20, 0, `"${WORD}"`);
  const role = n % 3 === 0 ? "user" : n % 3 === 1 ? "assistant" : "tool";
  return JSON.stringify({
    type: "message",
    id: `m${n.toString(36).padStart(8, "0")}`,
    ts: new Date(Date.UTC(2026, 0, 1) + n * 1000).toISOString(),
    message: { role, content: words.join(" ") },
    meta: { channel: "telegram", chatId: "123456789", senderId: "123456789", messageId: String(n) },
  });
}

/** Writes the corpus: FILES transcripts with headers, and a store naming the newest. */
async function writeCorpus(storeDir: string): Promise<number> {
  await mkdir(storeDir, { recursive: true });
  const perFile = Math.floor((CORPUS_MB * MiB) / FILES);
  let n = 0;
  let total = 0;
  for (let f = 0; f < FILES; f++) {
    const id = `bench-${String(f).padStart(2, "0")}`;
    const handle = await open(join(storeDir, `${id}.jsonl`), "w");
    let size = 0;
    const header = `${JSON.stringify({ type: "session", version: 1, id, sessionKey: `group:${f}`, createdAt: "2026-01-01T00:00:00.000Z" })}\n`;
    await handle.write(header);
    size += header.length;
    while (size < perFile) {
      const batch: string[] = [];
      for (let i = 0; i < 2000; i++) batch.push(line(n++));
      const text = `${batch.join("\n")}\n`;
      await handle.write(text);
      size += Buffer.byteLength(text);
    }
    await handle.close();
    total += size;
  }
  await writeFile(
    join(storeDir, "sessions.json"),
    JSON.stringify({ main: { sessionId: "bench-15", updatedAt: 0 } }),
  );
  return total;
}

function run(cmd: string, args: string[], env: NodeJS.ProcessEnv): Promise<{ ms: number; stdout: string }> {
  return new Promise((resolve, reject) => {
    const start = process.hrtime.bigint();
    const child = spawn(cmd, args, { env, stdio: ["ignore", "pipe", "inherit"] });
    const out: Buffer[] = [];
    child.stdout.on("data", (chunk: Buffer) => out.push(chunk));
    child.on("error", reject);
    child.on("close", (code) => {
      const ms = Number(process.hrtime.bigint() - start) / 1e6;
      // grep exits 1 when nothing matched; anything else is a failure of the bench.
      if (code !== 0 && !(cmd === "grep" && code === 1)) reject(new Error(`${cmd} exited with ${code}`));
      else resolve({ ms, stdout: Buffer.concat(out).toString("utf8") });
    });
  });
}

export async function benchSearch(): Promise<BenchRow[]> {
  const dir = await mkdtemp(join(tmpdir(), "clawdis-bench-search-"));
  try {
    const storeDir = join(dir, "sessions");
    const bytes = await writeCorpus(storeDir);
    const files = Array.from({ length: FILES }, (_, f) =>
      join(storeDir, `bench-${String(f).padStart(2, "0")}.jsonl`),
    );
    const hwmFile = join(dir, "hwm");
    const env: NodeJS.ProcessEnv = {
      ...process.env,
      CLAWDIS_STATE_DIR: dir,
      HOME: dir,
      NO_COLOR: "1",
      CLAWDIS_BENCH_HWM: hwmFile,
    };
    delete env.CLAWDIS_CONFIG_PATH;
    const preload = pathToFileURL(join(distBench, "report-hwm.js")).href;
    const hwm: number[] = [];
    let expected = -1;
    const { ours, baseline } = await interleaved(
      ROUNDS,
      async () => {
        const args = ["--import", preload, bin, "sessions", "search", WORD, "--limit", "1000", "--json"];
        const { ms, stdout } = await run(process.execPath, args, env);
        const hits = (JSON.parse(stdout) as { hits: unknown[] }).hits.length;
        if (expected >= 0 && hits !== expected)
          throw new Error(`search found ${hits} hits, grep ${expected} lines`);
        hwm.push(Number(await readFile(hwmFile, "utf8")) / 1024);
        return ms;
      },
      async () => {
        const { ms, stdout } = await run("grep", ["-F", "-c", "-h", WORD, ...files], env);
        expected = stdout
          .trim()
          .split("\n")
          .reduce((sum, count) => sum + Number(count), 0);
        return ms;
      },
    );
    const mb = bytes / MiB;
    const rate = (ms: number) => `${((mb / ms) * 1000).toFixed(0)} MB/s`;
    return [
      {
        name: `search ${mb.toFixed(0)} MiB of transcripts (${FILES} files), whole corpus`,
        unit: "ms",
        ours,
        baselineName: "grep -F -c",
        baseline,
        target: { kind: "ratio", max: 2 },
        note: `${expected} hits; ours ${rate(median(ours))}, grep ${rate(median(baseline))}; process start included; case-insensitive against grep's exact bytes`,
      },
      {
        name: "search: peak memory of the search process (VmHWM)",
        unit: "MB",
        ours: hwm.slice(-ours.length),
        baselineName: "none (a bound)",
        baseline: [],
        target: { kind: "below", max: 100, on: "max" },
        note: "bench/report-hwm.ts reads /proc/self/status at exit",
      },
    ];
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}
