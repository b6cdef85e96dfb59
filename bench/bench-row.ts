/** One line of the benchmark table: our figure against a baseline measured in the same run. */
export interface BenchRow {
  name: string;
  ours: number;
  baselineName: string;
  baseline: number;
  unit: string;
  /** Free text, e.g. "p99 1.2 ms". */
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

export function formatTable(rows: BenchRow[]): string {
  const fmt = (n: number) => (n >= 100 ? n.toFixed(0) : n >= 10 ? n.toFixed(1) : n.toFixed(2));
  const header = ["benchmark", "ours", "baseline", "baseline value", "ratio (ours/baseline)", "note"];
  const body = rows.map((r) => [
    r.name,
    `${fmt(r.ours)} ${r.unit}`,
    r.baselineName,
    `${fmt(r.baseline)} ${r.unit}`,
    `${(r.ours / r.baseline).toFixed(2)}x`,
    r.note ?? "",
  ]);
  const widths = header.map((h, i) => Math.max(h.length, ...body.map((row) => row[i]!.length)));
  const line = (cells: string[]) => cells.map((c, i) => c.padEnd(widths[i]!)).join(" | ");
  return [line(header), widths.map((w) => "-".repeat(w)).join("-|-"), ...body.map(line)].join("\n");
}
