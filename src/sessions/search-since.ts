/**
 * `--since` / `since=` (pure): how far back a search goes, as an epoch-ms lower bound on a hit's time.
 * Accepted: a duration back from now, `<n>m`, `<n>h`, `<n>d` or `<n>w` (minutes, hours, days, weeks; a whole
 * number), or a date or time in ISO form (`2026-01-31`, `2026-01-31T09:00`, `2026-01-31T09:00:00Z`; a date or
 * time without a zone is the machine's local time, as `Date.parse` reads it). A string is why it is refused.
 */
const UNIT_MS: Record<string, number> = { m: 60_000, h: 3_600_000, d: 86_400_000, w: 604_800_000 };

export function parseSince(value: string, now: number): number | string {
  const text = value.trim();
  const duration = /^(\d{1,7})([mhdw])$/.exec(text);
  if (duration) return now - Number(duration[1]) * (UNIT_MS[duration[2] as string] as number);
  if (/^\d{4}-\d{2}-\d{2}([T ]\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:?\d{2})?)?$/.test(text)) {
    // A bare date is local midnight (Date.parse would take it as UTC).
    const at = Date.parse(text.length === 10 ? `${text}T00:00` : text.replace(" ", "T"));
    if (Number.isFinite(at)) return at;
  }
  return `since must be a duration like 30m, 12h, 7d or 2w, or a date like 2026-01-31, got ${JSON.stringify(value)}`;
}
