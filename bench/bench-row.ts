/**
 * One line of the benchmark table: our figure against a baseline measured in the same run, with the target the
 * issue set for it. Samples are kept whole so that every row prints min / median / max (and p99 where the
 * target is a p99), and the verdict is computed, not eyeballed.
 */
export interface Samples {
  values: number[];
}

/**
 * How a row is judged: `ours` (median, or p99 with `on: "p99"`) at most `baseline` times `max` ("ratio"), at
 * least `baseline` times `min` ("ratio-above": a rate), or against a bound.
 */
export type Target =
  | { kind: "ratio"; max: number; on?: "median" | "p99" }
  | { kind: "ratio-above"; min: number; on?: "median" }
  | { kind: "below"; max: number; on?: "median" | "p99" | "max" }
  | { kind: "above"; min: number; on?: "median" };

export interface BenchRow {
  name: string;
  unit: string;
  ours: number[];
  baselineName: string;
  /** Empty for a row judged against an absolute bound only. */
  baseline: number[];
  target?: Target;
  /** Free text: sizes, what the baseline does, etc. */
  note?: string;
}

/** Median of a list of numbers (the list is not modified). */
export function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  if (sorted.length === 0) return Number.NaN;
  return sorted.length % 2 === 1 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
}

/** The p-th percentile (0..100), nearest-rank. */
export function percentile(values: number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  if (sorted.length === 0) return Number.NaN;
  const rank = Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1));
  return sorted[rank]!;
}

/** Milliseconds elapsed while `fn` runs. */
export async function timeMs(fn: () => unknown | Promise<unknown>): Promise<number> {
  const start = process.hrtime.bigint();
  await fn();
  return Number(process.hrtime.bigint() - start) / 1e6;
}

/**
 * Runs `ours` and `baseline` alternately, `rounds` times each after `warmup` unrecorded pairs, so that both see
 * the same machine (a noisy neighbour slows both, not one). Each function returns its own measurement.
 */
export async function interleaved(
  rounds: number,
  ours: () => Promise<number>,
  baseline: () => Promise<number>,
  warmup = 1,
): Promise<{ ours: number[]; baseline: number[] }> {
  const a: number[] = [];
  const b: number[] = [];
  for (let i = -warmup; i < rounds; i++) {
    const x = await ours();
    const y = await baseline();
    if (i >= 0) {
      a.push(x);
      b.push(y);
    }
  }
  return { ours: a, baseline: b };
}

function pick(values: number[], on: "median" | "p99" | "max" | undefined): number {
  if (on === "p99") return percentile(values, 99);
  if (on === "max") return Math.max(...values);
  return median(values);
}

/** Whether the row meets its target (undefined: no target). */
export function verdict(row: BenchRow): boolean | undefined {
  const t = row.target;
  if (t === undefined) return undefined;
  if (t.kind === "ratio") return pick(row.ours, t.on) <= t.max * pick(row.baseline, t.on);
  if (t.kind === "ratio-above") return pick(row.ours, t.on) >= t.min * pick(row.baseline, t.on);
  if (t.kind === "below") return pick(row.ours, t.on) <= t.max;
  return pick(row.ours, t.on) >= t.min;
}

export function describeTarget(t: Target | undefined, unit: string): string {
  if (t === undefined) return "";
  const on = t.on && t.on !== "median" ? `${t.on} ` : "";
  if (t.kind === "ratio") return `${on}≤ ${t.max}x`;
  if (t.kind === "ratio-above") return `≥ ${t.min}x`;
  if (t.kind === "below") return `${on}≤ ${t.max} ${unit}`;
  return `≥ ${t.min} ${unit}`;
}

const fmt = (n: number) =>
  !Number.isFinite(n) ? "-" : n >= 100 ? n.toFixed(0) : n >= 10 ? n.toFixed(1) : n.toFixed(2);

function stats(values: number[], unit: string, p99: boolean): string {
  if (values.length === 0) return "";
  const base = `${fmt(median(values))} ${unit} (${fmt(Math.min(...values))}–${fmt(Math.max(...values))})`;
  return p99 ? `${base} p99 ${fmt(percentile(values, 99))}` : base;
}

/** The table `npm run bench` prints: median (min–max) of each side, the ratio, the target and the verdict. */
export function formatTable(rows: BenchRow[]): string {
  const header = [
    "benchmark",
    "ours",
    "baseline",
    "baseline: median (min–max)",
    "ratio",
    "target",
    "met",
    "note",
  ];
  const body = rows.map((r) => {
    const p99 = r.target?.on === "p99";
    const ok = verdict(r);
    const ratio =
      r.baseline.length > 0
        ? `${(pick(r.ours, p99 ? "p99" : "median") / pick(r.baseline, p99 ? "p99" : "median")).toFixed(2)}x`
        : "";
    return [
      r.name,
      stats(r.ours, r.unit, p99),
      r.baselineName,
      stats(r.baseline, r.unit, p99),
      ratio,
      describeTarget(r.target, r.unit),
      ok === undefined ? "" : ok ? "yes" : "NO",
      `n=${r.ours.length}${r.note ? `; ${r.note}` : ""}`,
    ];
  });
  const widths = header.map((h, i) => Math.max(h.length, ...body.map((row) => row[i]!.length)));
  const line = (cells: string[]) => cells.map((c, i) => c.padEnd(widths[i]!)).join(" | ");
  const judged = rows.filter((r) => r.target !== undefined);
  const met = judged.filter((r) => verdict(r) === true).length;
  return [
    line(header),
    widths.map((w) => "-".repeat(w)).join("-|-"),
    ...body.map(line),
    "",
    `targets met: ${met} of ${judged.length}`,
  ].join("\n");
}

/**
 * The line under the table that says the machine's phase during the run: the load average (1, 5, 15 min) at its
 * start and end, and the figures of the baselines that follow the machine and nothing of ours (the bare relay's
 * rows, `node -e 0`), so a run is read against its own machine: a ratio is of the same loop, an absolute figure
 * is not.
 */
export function machineLine(
  rows: BenchRow[],
  load: { start: readonly number[]; end: readonly number[]; cores: number },
): string {
  const avg = (l: readonly number[]) => l.map((n) => n.toFixed(2)).join(" ");
  // The first row of each floor and unit: the relay's p50 to the model and its rate, `node -e 0`.
  const seen = new Set<string>();
  const unique: string[] = [];
  for (const r of rows) {
    if (r.baseline.length === 0 || !/^(bare relay|node -e 0)/.test(r.baselineName)) continue;
    const floor = r.baselineName.split(",")[0] as string;
    if (seen.has(`${floor}|${r.unit}`)) continue;
    seen.add(`${floor}|${r.unit}`);
    unique.push(`${floor} ${fmt(median(r.baseline))} ${r.unit} (${r.name})`);
  }
  return [
    `machine: ${load.cores} cores, load average ${avg(load.start)} at the start, ${avg(load.end)} at the end`,
    ...(unique.length > 0 ? [`floors of this run: ${unique.join("; ")}`] : []),
  ].join("\n");
}
