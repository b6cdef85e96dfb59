/** Numbers and durations for people to read. Pure, table-tested. */

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

/** A delay for humans: `250ms`, `4s`, `2m 8s`, `5m`. */
export function formatDuration(ms: number): string {
  if (ms < 1000) return `${Math.max(0, Math.round(ms))}ms`;
  const seconds = Math.round(ms / 1000);
  if (seconds < 60) return `${seconds}s`;
  const minutes = Math.floor(seconds / 60);
  const rest = seconds % 60;
  return rest === 0 ? `${minutes}m` : `${minutes}m ${rest}s`;
}
