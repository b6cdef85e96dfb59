/** Units of a duration ("20m", "1h30m", "45s", "2d", "1w"), in milliseconds. */
const UNIT_MS: Record<string, number> = {
  s: 1000,
  m: 60_000,
  h: 3_600_000,
  d: 86_400_000,
  w: 604_800_000,
};

const WHOLE = /^(?:\s*\d+\s*[smhdw]\s*)+$/i;
const PART = /(\d+)\s*([smhdw])/gi;

/**
 * The milliseconds of a duration written as one or more `<count><unit>` parts, units `s`, `m`, `h`, `d`, `w`
 * ("90s", "20m", "1h30m", "2d"); undefined for anything else or for a total of zero. Pure.
 */
export function parseDuration(text: string): number | undefined {
  if (!WHOLE.test(text)) return undefined;
  let total = 0;
  for (const match of text.matchAll(PART)) {
    total += Number(match[1]) * (UNIT_MS[match[2]!.toLowerCase()] ?? 0);
  }
  return total > 0 && Number.isSafeInteger(total) ? total : undefined;
}
