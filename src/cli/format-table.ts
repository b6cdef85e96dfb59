/** Small text helpers for human-readable CLI output. Pure functions, table-tested. */
import { formatTokens } from "../core/format.js";

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
