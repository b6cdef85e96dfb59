/**
 * Splits a reply into parts of at most `limit` characters, preferring paragraph, then line, then word breaks.
 * Pure. Never returns an empty part.
 *
 * Fence-aware: a cut inside a fenced code block (``` or ~~~) closes the fence at the end of that part and
 * opens it again, with the same info string, at the start of the next one, so every part renders on its own
 * and no code block ever breaks open. The parts stay within `limit` with those fence lines counted. Apart from
 * the added fence lines, the concatenation of the parts equals the input up to the whitespace at the breaks.
 */
export function splitText(text: string, limit: number): string[] {
  if (limit < 1) throw new RangeError("limit must be >= 1");
  const parts: string[] = [];
  let rest = text.trim();
  while (rest.length > limit) {
    const fenceAtStart = openFenceAt(rest, 0);
    // Room for a closing fence line ("\n```", or a longer marker), should this part end inside a code block.
    const reserve = fenceAtStart === undefined && !containsFence(rest.slice(0, limit)) ? 0 : 8;
    const room = limit - reserve >= Math.max(8, limit / 2) ? limit - reserve : limit;
    const cut = breakAt(rest, room);
    let part = rest.slice(0, cut).trimEnd();
    let next = rest.slice(cut).trimStart();
    const open = openFenceAt(rest, cut);
    if (open !== undefined && room < limit) {
      part = `${part}\n${open.marker}`;
      next = `${open.line}\n${next}`;
      // A part that is only the opening fence line would never shrink `rest`: cut hard instead.
      if (next.length >= rest.length) {
        part = rest.slice(0, limit);
        next = rest.slice(limit).trimStart();
      }
    }
    if (part.trim().length > 0) parts.push(part);
    rest = next;
  }
  if (rest.length > 0) parts.push(rest);
  return parts;
}

function breakAt(rest: string, room: number): number {
  const window = rest.slice(0, room + 1);
  let cut = window.lastIndexOf("\n\n");
  if (cut < room / 2) cut = window.lastIndexOf("\n");
  if (cut < room / 2) cut = window.lastIndexOf(" ");
  if (cut < room / 2) cut = room;
  return cut;
}

const FENCE = /^[ \t]{0,3}(`{3,}|~{3,})(.*)$/;

function containsFence(text: string): boolean {
  return text.split("\n").some((line) => FENCE.test(line));
}

/** The code fence open at offset `at` of `text` (its opening line and closing marker), if any. */
function openFenceAt(text: string, at: number): { line: string; marker: string } | undefined {
  let open: { line: string; marker: string } | undefined;
  let offset = 0;
  for (const line of text.split("\n")) {
    if (offset >= at) break;
    const match = FENCE.exec(line);
    if (match) {
      const marker = match[1]!;
      if (open === undefined) open = { line: line.trim(), marker };
      else if (marker[0] === open.marker[0] && marker.length >= open.marker.length && match[2]!.trim() === "")
        open = undefined;
    }
    offset += line.length + 1;
  }
  return open;
}
