/**
 * Splits a reply into parts of at most `limit` characters, preferring paragraph, then line, then word breaks.
 * Pure. Never returns an empty part; the concatenation of the parts equals the input up to the whitespace at
 * the breaks.
 */
export function splitText(text: string, limit: number): string[] {
  if (limit < 1) throw new RangeError("limit must be >= 1");
  const parts: string[] = [];
  let rest = text.trim();
  while (rest.length > limit) {
    const window = rest.slice(0, limit + 1);
    let cut = window.lastIndexOf("\n\n");
    if (cut < limit / 2) cut = window.lastIndexOf("\n");
    if (cut < limit / 2) cut = window.lastIndexOf(" ");
    if (cut < limit / 2) cut = limit;
    const part = rest.slice(0, cut).trimEnd();
    if (part.length > 0) parts.push(part);
    rest = rest.slice(cut).trimStart();
  }
  if (rest.length > 0) parts.push(rest);
  return parts;
}
