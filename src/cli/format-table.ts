/** Small text helpers for human-readable CLI output. Pure functions, table-tested. */

const SECOND = 1000;
const MINUTE = 60 * SECOND;
const HOUR = 60 * MINUTE;
const DAY = 24 * HOUR;

/** A short age: `45s`, `3m`, `2h`, `5d` (rounded down; negative ages, from clock skew, read as `0s`). */
export function formatAge(ms: number): string {
  if (!Number.isFinite(ms) || ms < MINUTE)
    return `${Math.max(0, Math.floor(Number.isFinite(ms) ? ms / SECOND : 0))}s`;
  if (ms < HOUR) return `${Math.floor(ms / MINUTE)}m`;
  if (ms < DAY) return `${Math.floor(ms / HOUR)}h`;
  return `${Math.floor(ms / DAY)}d`;
}

/** A token count: `950`, `1.5k`, `12.3k`, `128k`, `1.2M` (one decimal below 100 of the unit, none above). */
export function formatTokens(n: number): string {
  const scaled = (value: number, unit: string) =>
    `${value < 100 ? Number(value.toFixed(1)).toString() : Math.round(value).toString()}${unit}`;
  if (n < 1000) return String(Math.round(n));
  if (n < 1_000_000) return scaled(n / 1000, "k");
  return scaled(n / 1_000_000, "M");
}

/**
 * Context in use against the window: `12.3k/128k (9%)` (percent rounded down, so a full window shows 100% only
 * when it is full); `12.3k` without a window; `-` without a count. `~` marks an estimate.
 */
export function formatContext(
  used: number | undefined,
  window: number | undefined,
  estimated = false,
): string {
  if (used === undefined || !Number.isFinite(used)) return "-";
  const mark = estimated ? "~" : "";
  if (window === undefined || !(window > 0)) return `${mark}${formatTokens(used)}`;
  return `${mark}${formatTokens(used)}/${formatTokens(window)} (${Math.floor((used / window) * 100)}%)`;
}

/**
 * Renders rows as aligned columns under a header, separated by two spaces; the last column is not padded.
 * Cells are single-line: newlines and tabs are shown as spaces.
 */
export function renderTable(header: readonly string[], rows: readonly (readonly string[])[]): string {
  const clean = (cell: string) => cell.replace(/[\t\r\n]+/g, " ");
  const all = [header, ...rows].map((row) => header.map((_, i) => clean(row[i] ?? "")));
  const widths = header.map((_, i) => Math.max(...all.map((row) => row[i]!.length)));
  return all
    .map((row) =>
      row
        .map((cell, i) => (i === row.length - 1 ? cell : cell.padEnd(widths[i]!)))
        .join("  ")
        .trimEnd(),
    )
    .join("\n");
}

/** One tab-separated line per row, for scripts (`cut -f2`); tabs and newlines inside cells become spaces. */
export function renderTsv(rows: readonly (readonly string[])[]): string {
  return rows.map((row) => row.map((cell) => cell.replace(/[\t\r\n]+/g, " ")).join("\t")).join("\n");
}
