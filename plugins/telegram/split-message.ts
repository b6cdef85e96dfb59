/** Telegram's longest message text, in UTF-16 code units after the entities are parsed. */
export const TELEGRAM_TEXT_LIMIT = 4096;

const FENCE_LINE = /^[ \t]{0,3}(`{3,}|~{3,})(.*)$/;

interface OpenFence {
  /** The opening line, repeated at the start of the next part. */
  line: string;
  /** The marker that closes it (``` or ~~~, as long as the opening one). */
  marker: string;
}

/**
 * Splits the agent's Markdown into parts of at most `limit` characters (default Telegram's 4096), preferring a
 * paragraph break, then a line break, then a space, never cutting before half the limit. Code fences stay
 * balanced: a part that ends inside a code block closes it, and the next part opens it again with the same info
 * string. Deterministic (a restart splits the same reply the same way); never returns an empty part. Since
 * rendering never lengthens the visible text (render-markdown.ts), every part fits one Telegram message.
 */
export function splitMessage(text: string, limit = TELEGRAM_TEXT_LIMIT): string[] {
  if (limit < 16) throw new RangeError("limit must be at least 16");
  const parts: string[] = [];
  let rest = text.trim();
  while (rest.length > limit) {
    // Room for "\n" + a closing marker, should the cut fall inside a code block.
    const room = limit - 1 - longestMarker(rest.slice(0, limit));
    let cut = breakPoint(rest, room);
    let fence = fenceOpenAt(rest, cut);
    // Never cut inside an opening fence line itself: cut before it instead.
    if (fence && rest.slice(0, cut).trimEnd().endsWith(fence.line)) {
      const before = rest.lastIndexOf(fence.line, cut);
      if (before > 0) {
        cut = before;
        fence = fenceOpenAt(rest, cut);
      }
    }
    const head = rest.slice(0, cut).trimEnd();
    const tail = rest
      .slice(cut)
      .replace(/^[ \t]*\n?/, "")
      .replace(/^\n+/, "");
    const next = fence ? `${fence.line}\n${tail}` : tail.trimStart();
    if (next.length >= rest.length) {
      // Only a fence line fits before the cut (a giant info string): cut hard, so the loop always ends.
      parts.push(rest.slice(0, limit));
      rest = rest.slice(limit).trimStart();
      continue;
    }
    parts.push(fence ? `${head}\n${fence.marker}` : head);
    rest = next;
  }
  if (rest.trim().length > 0) parts.push(rest);
  return parts.filter((part) => part.trim().length > 0);
}

function longestMarker(text: string): number {
  let longest = 0;
  for (const line of text.split("\n")) {
    const match = FENCE_LINE.exec(line);
    if (match?.[1]) longest = Math.max(longest, match[1].length);
  }
  return longest;
}

/** Where to cut `text` so that the part is at most `room` characters. */
function breakPoint(text: string, room: number): number {
  const window = text.slice(0, room + 1);
  const half = Math.floor(room / 2);
  for (const separator of ["\n\n", "\n", " "]) {
    const at = window.lastIndexOf(separator);
    if (at >= half && at <= room) return at;
  }
  return room;
}

/** The fence open just before offset `at` of `text`, if any. */
function fenceOpenAt(text: string, at: number): OpenFence | undefined {
  let open: OpenFence | undefined;
  let offset = 0;
  for (const line of text.split("\n")) {
    if (offset >= at) break;
    const match = FENCE_LINE.exec(line);
    const marker = match?.[1];
    if (marker) {
      if (open === undefined) open = { line: line.trim(), marker };
      else if (marker[0] === open.marker[0] && marker.length >= open.marker.length && !match[2]?.trim())
        open = undefined;
    }
    offset += line.length + 1;
  }
  return open;
}
