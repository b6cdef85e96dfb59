/**
 * The session store against one atomic rewrite of the same file (issue 12, store rows). Every row runs its two
 * sides interleaved on a store in a temp directory (the shape of makeStore: a busy gateway's entries, ~470 bytes
 * each), with the page cache warm:
 * - first, the disk's state: creating an empty file against opening one (no target; see createRow);
 * - one `SessionStore.update` of one key (lock, freshness check, change, temp file, fsync, rename, directory
 *   fsync) at 1k / 10k / 100k keys, against writing the same bytes to a temp file + fsync + rename + directory
 *   fsync (what our write does, minus everything else);
 * - the first update after an outside edit (another writer changed one field of one entry, saved by rename or in
 *   place), against the same rewrite.
 * (`clawdis sessions --json` on such a store is measured in startup-bench.ts.)
 * A row throws when the store lost a key or an edit (the work was wrong, not slow).
 */
import { closeSync, openSync, renameSync } from "node:fs";
import { mkdtemp, open, readFile, rename, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { silentLogger } from "../src/core/logger.js";
import { SessionStore } from "../src/sessions/store.js";
import type { SessionEntry, SessionMap } from "../src/sessions/types.js";
import { type BenchRow, interleaved, percentile, timeMs } from "./bench-row.js";

/** The key of entry `n` in makeStore. */
const keyOf = (n: number) => (n === 0 ? "main" : `group:-100${n}`);

/** A store shaped like a busy gateway's: one primary session and groups with the usual fields. */
export function makeStore(keys: number, now: number): SessionMap {
  const map: SessionMap = {};
  for (let n = 0; n < keys; n++) {
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
    map[keyOf(n)] = entry;
  }
  return map;
}

/** What our write does to the file, and nothing else: temp file, write, fsync, rename, directory fsync. */
async function atomicRewrite(path: string, bytes: Buffer): Promise<void> {
  const temp = `${path}.tmp`;
  const handle = await open(temp, "w", 0o600);
  try {
    await handle.writeFile(bytes);
    await handle.sync();
  } finally {
    await handle.close();
  }
  renameSync(temp, path);
  const dir = await open(dirname(path), "r");
  try {
    await dir.sync();
  } finally {
    await dir.close();
  }
}

/**
 * Reads a whole file into one buffer kept from call to call (grown when too small) and returns the part it fills.
 * The bench's own reads of a 4.6 / 46 MB store then leave no garbage: a new buffer per round was external memory
 * that V8 collected with full GCs of 50-150 ms, which landed inside whichever side ran next (the 100k row's
 * median once read 160 ms, its minimum 41). A view is valid until the next read into the same scratch.
 */
class Scratch {
  private buffer = Buffer.alloc(0);

  async read(path: string): Promise<Buffer> {
    const handle = await open(path, "r");
    try {
      const { size } = await handle.stat();
      if (this.buffer.length < size) this.buffer = Buffer.allocUnsafeSlow(Math.ceil(size * 1.1));
      let filled = 0;
      while (filled < size) {
        const { bytesRead } = await handle.read(this.buffer, filled, size - filled, filled);
        if (bytesRead === 0) break;
        filled += bytesRead;
      }
      return this.buffer.subarray(0, filled);
    } finally {
      await handle.close();
    }
  }
}

/** A deterministic walk over the keys (never `main`, never the same key twice in a row). */
function keyWalk(keys: number): () => string {
  let i = 0;
  return () => keyOf(1 + ((i++ * 7_919) % (keys - 1)));
}

const bump = (current: SessionEntry | undefined) =>
  current && { ...current, inputTokens: (current.inputTokens ?? 0) + 1 };

interface Sized {
  dir: string;
  path: string;
  bytes: number;
  store: SessionStore;
  /** The rewrite of the store's current bytes to a sibling file, timed. */
  rewrite(): Promise<number>;
}

async function sizedStore(root: string, keys: number): Promise<Sized> {
  const dir = await mkdtemp(join(root, `k${keys}-`));
  const path = join(dir, "sessions.json");
  const text = `${JSON.stringify(makeStore(keys, Date.now()), null, 2)}\n`;
  await writeFile(path, text);
  const store = new SessionStore({ path, logger: silentLogger });
  await store.load();
  const baseline = join(dir, "baseline.json");
  const scratch = new Scratch();
  return {
    dir,
    path,
    bytes: Buffer.byteLength(text),
    store,
    rewrite: async () => {
      const bytes = await scratch.read(path);
      return timeMs(() => atomicRewrite(baseline, bytes));
    },
  };
}

const mb = (bytes: number) => `${(bytes / 1024 / 1024).toFixed(1)} MB`;
const p99s = (ours: number[], baseline: number[]) =>
  `p99 ${percentile(ours, 99).toFixed(1)} vs ${percentile(baseline, 99).toFixed(1)} ms`;

/** Rows of one update per round at `keys` keys against the rewrite of the same file. */
async function updateRow(
  root: string,
  keys: number,
  rounds: number,
  target: BenchRow["target"],
): Promise<BenchRow> {
  const s = await sizedStore(root, keys);
  const next = keyWalk(keys);
  const { ours, baseline } = await interleaved(
    rounds,
    () => timeMs(() => s.store.update(next(), bump)),
    s.rewrite,
    3,
  );
  await expectKeys(s.path, keys);
  return {
    name: `store update, 1 key of ${keys / 1000}k`,
    unit: "ms",
    ours,
    baselineName: "tmp + fsync + rename + dir fsync",
    baseline,
    target,
    note: `${mb(s.bytes)}; ${p99s(ours, baseline)}; both fsync the file and the directory`,
  };
}

/**
 * The first update after another writer changed one field of one entry (`compactionCount`, the way an editor
 * saves a whole file: the rest as it was, by rename or in place), against the same rewrite. The edit is made on
 * the bytes (no parse of the whole file in the bench itself, whose garbage would be collected inside our side).
 */
async function outsideEditRow(root: string, keys: number, rounds: number, style: "rename" | "in place") {
  const s = await sizedStore(root, keys);
  const next = keyWalk(keys);
  let edits = 0;
  let edited = "";
  const scratch = new Scratch();
  const ours = async () => {
    edited = keyOf(1 + ((edits * 104_729) % (keys - 1)));
    const value = 100 + edits++;
    const pieces = withField(await scratch.read(s.path), edited, "compactionCount", value);
    if (style === "rename") {
      await writeFile(`${s.path}.editor`, pieces);
      await rename(`${s.path}.editor`, s.path);
    } else {
      await writeFile(s.path, pieces);
    }
    let key = next();
    if (key === edited) key = next();
    const ms = await timeMs(() => s.store.update(key, bump));
    if (fieldOf(await scratch.read(s.path), edited, "compactionCount") !== value) {
      throw new Error(`the edit of ${edited} was lost`);
    }
    return ms;
  };
  const { ours: samples, baseline } = await interleaved(rounds, ours, s.rewrite, 2);
  await expectKeys(s.path, keys);
  return {
    name: `first update after an outside edit (${style}), ${keys / 1000}k`,
    unit: "ms",
    ours: samples,
    baselineName: "tmp + fsync + rename + dir fsync",
    baseline,
    target: { kind: "ratio", max: 2 },
    note: `${mb(s.bytes)}; one field of one entry changed by another writer; ${p99s(samples, baseline)}`,
  } satisfies BenchRow;
}

/** Where the number `field` of `key`'s entry sits in a file in the store's layout: [start, end). */
function fieldAt(bytes: Buffer, key: string, field: string): [number, number] {
  const entry = bytes.indexOf(`\n  ${JSON.stringify(key)}: {`);
  const at = bytes.indexOf(`"${field}": `, entry);
  if (entry < 0 || at < 0) throw new Error(`no ${field} in the entry of ${key}`);
  const start = at + field.length + 4;
  let end = start;
  while (bytes[end]! >= 0x30 && bytes[end]! <= 0x39) end++;
  return [start, end];
}

/**
 * The file with one number field of one entry changed, the way an editor saves it (the rest as it was): its
 * pieces, views of `bytes` around the new number (written as they are, no copy of the whole file).
 */
function withField(bytes: Buffer, key: string, field: string, value: number): Buffer[] {
  const [start, end] = fieldAt(bytes, key, field);
  return [bytes.subarray(0, start), Buffer.from(String(value)), bytes.subarray(end)];
}

function fieldOf(bytes: Buffer, key: string, field: string): number {
  const [start, end] = fieldAt(bytes, key, field);
  return Number(bytes.subarray(start, end).toString());
}

async function expectKeys(path: string, keys: number): Promise<void> {
  const found = Object.keys(JSON.parse(await readFile(path, "utf8")) as object).length;
  if (found !== keys) throw new Error(`the benchmarked store has ${found} keys, not ${keys}`);
}

/**
 * Memory held by a store of `keys` keys before and after one update of each key (issue 11: the store keeps one
 * copy of the file's bytes and its maps, no garbage in proportion to its size). Run with --expose-gc:
 * `node --expose-gc -e 'import("./dist/bench/store-bench.js").then((m) => m.storeMemory())'`.
 */
export async function storeMemory(keys = 10_000): Promise<void> {
  const gc = (globalThis as { gc?: () => void }).gc;
  if (gc === undefined) throw new Error("run with node --expose-gc");
  const root = await mkdtemp(join(tmpdir(), "clawdis-store-memory-"));
  try {
    const path = join(root, "sessions.json");
    await writeFile(path, `${JSON.stringify(makeStore(keys, Date.now()), null, 2)}\n`);
    const store = new SessionStore({ path, logger: silentLogger });
    await store.get("main");
    const measure = () => {
      gc();
      const m = process.memoryUsage();
      return {
        heapUsed: m.heapUsed,
        heapTotal: m.heapTotal,
        external: m.external,
        arrayBuffers: m.arrayBuffers,
        rss: m.rss,
      };
    };
    const before = measure();
    const peakBefore = process.resourceUsage().maxRSS * 1024;
    for (let n = 0; n < keys; n++) await store.update(keyOf(n), bump);
    const after = measure();
    const peak = process.resourceUsage().maxRSS * 1024;
    await expectKeys(path, keys);
    const row = (name: string, a: number, b: number) =>
      `${name.padEnd(13)} ${mb(a).padStart(9)} ${mb(b).padStart(9)} ${mb(b - a).padStart(9)}`;
    process.stdout.write(
      [
        `store of ${keys} keys (${mb((await readFile(path)).length)}), ${keys} updates of distinct keys, after gc():`,
        `${"".padEnd(13)} ${"before".padStart(9)} ${"after".padStart(9)} ${"growth".padStart(9)}`,
        row("heapUsed", before.heapUsed, after.heapUsed),
        row("heapTotal", before.heapTotal, after.heapTotal),
        row("external", before.external, after.external),
        row("arrayBuffers", before.arrayBuffers, after.arrayBuffers),
        row("rss", before.rss, after.rss),
        row("peak rss", peakBefore, peak),
        `reads of the file during the updates: ${store.readCount}`,
        "",
      ].join("\n"),
    );
  } finally {
    await rm(root, { recursive: true, force: true });
  }
}

/**
 * The disk's state before the store rows, no target: creating an empty file against opening one that exists. On
 * ext4 without a journal (this machine) the kernel does not reuse an inode freed in the last minutes, and each
 * create walks past those: after thousands of files were deleted a create takes it ~1 ms instead of ~30 µs. A
 * store update makes three inodes (the lock's directory and owner record, the temp file), its baseline one, so
 * slow creates read as a slower store (docs/benchmarks.md).
 */
async function createRow(root: string, rounds: number): Promise<BenchRow> {
  const dir = await mkdtemp(join(root, "creates-"));
  const existing = join(dir, "existing");
  closeSync(openSync(existing, "w"));
  let n = 0;
  const { ours, baseline } = await interleaved(
    rounds,
    () => timeMs(() => closeSync(openSync(join(dir, `new-${n++}`), "wx"))),
    () => timeMs(() => closeSync(openSync(existing, "r+"))),
    3,
  );
  return {
    name: "creating a file (the disk's state), before the store rows",
    unit: "µs",
    ours: ours.map((ms) => ms * 1000),
    baselineName: "opening a file that exists",
    baseline: baseline.map((ms) => ms * 1000),
    note: "no target; slow creates (inodes deleted in the minutes before are skipped) inflate the store rows",
  };
}

export async function benchStore(): Promise<BenchRow[]> {
  const root = await mkdtemp(join(tmpdir(), "clawdis-store-bench-"));
  try {
    return [
      await createRow(root, 30),
      await updateRow(root, 1_000, 30, undefined),
      await updateRow(root, 10_000, 30, { kind: "ratio", max: 1.3 }),
      await updateRow(root, 100_000, 8, { kind: "ratio", max: 2 }),
      await outsideEditRow(root, 10_000, 15, "rename"),
      await outsideEditRow(root, 10_000, 15, "in place"),
    ];
  } finally {
    await rm(root, { recursive: true, force: true });
  }
}
