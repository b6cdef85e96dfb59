/**
 * The session store against its baselines, on a 10,000-key store in a temp directory:
 * (a) one locked, atomic, fsync'd `SessionStore.update` vs a naive unlocked read + JSON5.parse + rewrite, and vs
 *     the floor of one fsync'd small write on the same disk;
 * (b) `clawdis sessions --json` started cold vs `node -e` reading and JSON.parse-ing the same file.
 */
import { spawnSync } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { mkdtemp, open, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import JSON5 from "json5";
import { silentLogger } from "../src/core/logger.js";
import { SessionStore } from "../src/sessions/store.js";
import type { SessionEntry, SessionMap } from "../src/sessions/types.js";
import { type BenchRow, median, percentile, timeMs } from "./bench-row.js";

const KEYS = 10_000;
const UPDATE_RUNS = 50;
const CLI_RUNS = 10;

/** The clawdis checkout: the nearest folder above this file whose package.json is named "clawdis". */
export function findRepoRoot(from: string = fileURLToPath(import.meta.url)): string {
  for (let dir = dirname(from); ; dir = dirname(dir)) {
    const pkg = join(dir, "package.json");
    if (existsSync(pkg)) {
      try {
        if ((JSON.parse(readFileSync(pkg, "utf8")) as { name?: unknown }).name === "clawdis") return dir;
      } catch {
        // Not ours; keep walking up.
      }
    }
    if (dirname(dir) === dir) throw new Error(`no clawdis package.json above ${from}`);
  }
}

/** A store shaped like a busy gateway's: one primary session and groups with the usual fields. */
function makeStore(now: number): SessionMap {
  const map: SessionMap = {};
  for (let n = 0; n < KEYS; n++) {
    const entry: SessionEntry = {
      sessionId: `0b7c${n.toString(16).padStart(4, "0")}-1f2e-4d3c-9b8a-${(n * 7919).toString(16).padStart(12, "0")}`,
      updatedAt: now - n * 60_000,
      lastInteractionAt: now - n * 60_000,
      createdAt: now - n * 3_600_000,
      model: "gpt-4o-mini",
      inputTokens: 1000 + n,
      outputTokens: 200 + n,
      totalTokens: 1200 + 2 * n,
      contextTokens: 9000 + n,
      compactionCount: n % 3,
      origin: { channel: "telegram", chatId: `-100${n}`, chatType: "group", senderId: `${n}` },
    };
    map[n === 0 ? "main" : `group:-100${n}`] = entry;
  }
  return map;
}

async function fsyncWrite(path: string, text = '{"k":1}\n'): Promise<void> {
  const handle = await open(path, "w");
  try {
    await handle.writeFile(text);
    await handle.sync();
  } finally {
    await handle.close();
  }
}

/** Wall time of one child process run to its end; throws when it fails. */
function spawnMs(args: string[], cwd: string, env: NodeJS.ProcessEnv): { ms: number; stdout: string } {
  const start = process.hrtime.bigint();
  const result = spawnSync(process.execPath, args, {
    cwd,
    env,
    encoding: "utf8",
    maxBuffer: 256 * 1024 * 1024,
  });
  const ms = Number(process.hrtime.bigint() - start) / 1e6;
  if (result.status !== 0) throw new Error(`${args.join(" ")} exited ${result.status}: ${result.stderr}`);
  return { ms, stdout: result.stdout };
}

export async function benchStore(): Promise<BenchRow[]> {
  const root = findRepoRoot();
  const dir = await mkdtemp(join(tmpdir(), "clawdis-store-bench-"));
  try {
    const now = Date.now();
    const path = join(dir, "sessions.json");
    const naivePath = join(dir, "naive.json");
    const text = `${JSON.stringify(makeStore(now), null, 2)}\n`;
    await writeFile(path, text);
    await writeFile(naivePath, text);
    const sizeMb = (Buffer.byteLength(text) / 1024 / 1024).toFixed(1);

    // (a) one update
    const store = new SessionStore({ path, logger: silentLogger });
    const ours: number[] = [];
    for (let i = -3; i < UPDATE_RUNS; i++) {
      const key = `group:-100${1 + (((i + 3) * 97) % (KEYS - 1))}`;
      const ms = await timeMs(() =>
        store.update(
          key,
          (current) => current && { ...current, inputTokens: (current.inputTokens ?? 0) + 1 },
        ),
      );
      if (i >= 0) ours.push(ms); // the first runs warm up the lock module and the file cache
    }
    const naive: number[] = [];
    for (let i = -3; i < UPDATE_RUNS; i++) {
      const key = `group:-100${1 + (((i + 3) * 97) % (KEYS - 1))}`;
      const ms = await timeMs(async () => {
        const map = JSON5.parse(await readFile(naivePath, "utf8")) as SessionMap;
        const current = map[key]!;
        map[key] = { ...current, inputTokens: (current.inputTokens ?? 0) + 1, updatedAt: Date.now() };
        await writeFile(naivePath, `${JSON.stringify(map, null, 2)}\n`);
      });
      if (i >= 0) naive.push(ms);
    }
    const floor: number[] = [];
    for (let i = -3; i < UPDATE_RUNS; i++) {
      const ms = await timeMs(() => fsyncWrite(join(dir, "floor.json")));
      if (i >= 0) floor.push(ms);
    }
    // Not a baseline row, but where the time goes: writing and fsyncing the whole store once, nothing else.
    const bigWrite: number[] = [];
    for (let i = 0; i < 10; i++) bigWrite.push(await timeMs(() => fsyncWrite(join(dir, "big.json"), text)));
    const check = JSON.parse(await readFile(path, "utf8")) as SessionMap;
    if (Object.keys(check).length !== KEYS) throw new Error("the benchmarked store lost keys");

    // (b) sessions --json, cold
    const env = { ...process.env, CLAWDIS_STATE_DIR: join(dir, "state") };
    const bin = join(root, "bin", "clawdis.js");
    const cli: number[] = [];
    const plain: number[] = [];
    const readParse = "JSON.parse(require('node:fs').readFileSync(process.argv[1], 'utf8'))";
    for (let i = -1; i < CLI_RUNS; i++) {
      const run = spawnMs([bin, "sessions", "--json", "--store", path], root, env);
      if (i === -1) {
        const report = JSON.parse(run.stdout) as { count: number };
        if (report.count !== KEYS)
          throw new Error(`sessions --json listed ${report.count} of ${KEYS} sessions`);
      } else {
        cli.push(run.ms);
      }
      const base = spawnMs(["-e", readParse, path], root, env);
      if (i >= 0) plain.push(base.ms);
    }

    const updateNote = `p99 ${percentile(ours, 99).toFixed(1)} ms; locked, fsync'd, atomic; ${KEYS} keys, ${sizeMb} MB`;
    return [
      {
        name: "store update (1 key of 10k)",
        ours: median(ours),
        baselineName: "naive read+JSON5+rewrite, unlocked",
        baseline: median(naive),
        unit: "ms",
        note: `${updateNote}; naive p99 ${percentile(naive, 99).toFixed(1)} ms, no fsync`,
      },
      {
        name: "store update (1 key of 10k)",
        ours: median(ours),
        baselineName: "one fsync'd small write (floor)",
        baseline: median(floor),
        unit: "ms",
        note: `${updateNote}; one fsync'd write of the whole ${sizeMb} MB alone: ${median(bigWrite).toFixed(1)} ms`,
      },
      {
        name: "sessions --json, cold (10k keys)",
        ours: median(cli),
        baselineName: "node -e read + JSON.parse",
        baseline: median(plain),
        unit: "ms",
        note: `median of ${CLI_RUNS} spawns each; p99 ${percentile(cli, 99).toFixed(0)} ms`,
      },
    ];
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}
