import { closeSync, constants, fstatSync, openSync, readSync } from "node:fs";
import { utf8Text } from "../core/utf8-text.js";
import { isSearchRole, messageText, type SearchMatcher, type SearchRole } from "./search-match.js";

/**
 * The search of one transcript file, newest line first: the file is read backwards from its end in 64 KiB chunks
 * and every chunk's complete lines are taken from the last to the first, so a consumer that stops (`--limit`) reads
 * no more of the file than the hits it took. Within a chunk the raw bytes are matched against the matcher's
 * pre-filter first (a latin1 view, no decoding); only a line that passes is decoded and JSON-parsed.
 *
 * Contracts:
 * - a hit is a `message` entry of role user, assistant or tool (and `role` when given) whose text (messageText)
 *   matches; one hit per entry, at its first match;
 * - lines are split on "\n" only; a line that is not JSON or not an entry is passed over silently (the doctor
 *   reports those); a line longer than `maxLineBytes` is passed over unread;
 * - `since`: a candidate line (one that passed the pre-filter and parsed) whose `ts` is older ends the file's
 *   search, since the lines before it were written before it;
 * - memory is bounded by one chunk plus the longest line kept (`maxLineBytes`), never by the file;
 * - the file is opened without following a symbolic link; anything but a regular file has no hits.
 */
export interface FileHit {
  entryId: string;
  ts: string;
  role: SearchRole;
  /** The message's searched text, and where the match is in it. */
  text: string;
  start: number;
  end: number;
}

export interface FileSearchOptions {
  matcher: SearchMatcher;
  role?: SearchRole;
  /** Epoch ms: hits older than this are not wanted. */
  since?: number;
  /** Default MAX_LINE_BYTES. */
  maxLineBytes?: number;
  /** Called after every `pauseEveryBytes` read (a gateway lets other work run there). */
  pause?: () => Promise<void>;
  pauseEveryBytes?: number;
}

export interface FileScan {
  /** Bytes read from the file. */
  bytesRead: number;
}

export const SEARCH_CHUNK_BYTES = 64 * 1024;
/** The longest line a search reads (a longer one is passed over). */
export const MAX_LINE_BYTES = 16 * 1024 * 1024;

const NEWLINE = 0x0a;

export async function* searchFile(
  path: string,
  options: FileSearchOptions,
  scan: FileScan = { bytesRead: 0 },
): AsyncGenerator<FileHit> {
  let fd: number;
  try {
    fd = openSync(path, constants.O_RDONLY | constants.O_NOFOLLOW);
  } catch {
    return; // gone since it was listed, or a link: nothing to search
  }
  try {
    const stats = fstatSync(fd);
    if (!stats.isFile()) return;
    const maxLine = options.maxLineBytes ?? MAX_LINE_BYTES;
    let work = Buffer.allocUnsafe(SEARCH_CHUNK_BYTES * 2);
    // `work[0, tail)` holds the later part of a line whose start is in bytes not read yet.
    let tail = 0;
    let skipping = false;
    let position = stats.size;
    let sincePause = 0;
    while (position > 0) {
      const length = Math.min(SEARCH_CHUNK_BYTES, position);
      const start = position - length;
      if (length + tail > work.length) {
        const bigger = Buffer.allocUnsafe(Math.max(work.length * 2, length + tail));
        work.copy(bigger, length, 0, tail);
        work = bigger;
      } else if (tail > 0) {
        work.copyWithin(length, 0, tail);
      }
      const got = readFully(fd, work, length, start);
      scan.bytesRead += got;
      if (got < length) return; // the file shrank under us
      position = start;
      let region = work.subarray(0, length + tail);
      if (skipping) {
        // The end of a line too long to keep: drop it, up to the last "\n" of what was read.
        const last = region.lastIndexOf(NEWLINE);
        if (last === -1) {
          tail = 0;
          continue;
        }
        region = region.subarray(0, last + 1);
        skipping = false;
      }
      // Before the first "\n" is the end of a line that starts in an earlier chunk (at the file's start, a line).
      const first = start === 0 ? -1 : region.indexOf(NEWLINE);
      if (start > 0 && first === -1) {
        tail = region.length;
        if (tail > maxLine) {
          tail = 0;
          skipping = true;
        }
        continue;
      }
      const area = region.subarray(first + 1);
      for (const hit of searchArea(area, options)) {
        if (hit === "older") return;
        yield hit;
      }
      tail = first + 1;
      if (tail > maxLine) {
        tail = 0;
        skipping = true;
      }
      sincePause += got;
      if (options.pause && sincePause >= (options.pauseEveryBytes ?? 4 * 1024 * 1024)) {
        sincePause = 0;
        await options.pause();
      }
    }
  } finally {
    closeSync(fd);
  }
}

function readFully(fd: number, buffer: Buffer, length: number, position: number): number {
  let filled = 0;
  while (filled < length) {
    const n = readSync(fd, buffer, filled, length - filled, position + filled);
    if (n === 0) break;
    filled += n;
  }
  return filled;
}

/** The candidate lines of `area` (complete lines, split on "\n"), newest first, as [start, end) byte ranges. */
function candidateLines(area: Buffer, prefilter: RegExp | undefined): Array<[number, number]> {
  const lines: Array<[number, number]> = [];
  if (prefilter === undefined) {
    let start = 0;
    while (start < area.length) {
      const nl = area.indexOf(NEWLINE, start);
      const end = nl === -1 ? area.length : nl;
      if (end > start) lines.push([start, end]);
      start = end + 1;
    }
  } else {
    // latin1: one character per byte, so offsets in the string are offsets in the buffer.
    const raw = area.toString("latin1");
    prefilter.lastIndex = 0;
    for (;;) {
      const m = prefilter.exec(raw);
      if (!m) break;
      const start = raw.lastIndexOf("\n", m.index) + 1;
      const nl = raw.indexOf("\n", m.index + m[0].length);
      const end = nl === -1 ? raw.length : nl;
      lines.push([start, end]);
      prefilter.lastIndex = end + 1;
    }
  }
  return lines.reverse();
}

function* searchArea(area: Buffer, options: FileSearchOptions): Generator<FileHit | "older"> {
  for (const [start, end] of candidateLines(area, options.matcher.prefilter)) {
    let entry: unknown;
    try {
      entry = JSON.parse(utf8Text(area.subarray(start, end)));
    } catch {
      continue;
    }
    if (typeof entry !== "object" || entry === null) continue;
    const e = entry as { type?: unknown; id?: unknown; ts?: unknown; message?: { role?: unknown } };
    if (typeof e.ts !== "string" || typeof e.id !== "string") continue;
    if (options.since !== undefined) {
      const at = Date.parse(e.ts);
      if (Number.isFinite(at) && at < options.since) {
        yield "older";
        return;
      }
    }
    if (e.type !== "message") continue;
    const role = e.message?.role;
    if (typeof role !== "string" || !isSearchRole(role)) continue;
    if (options.role !== undefined && role !== options.role) continue;
    const text = messageText(e.message);
    if (text === undefined) continue;
    const found = options.matcher.find(text);
    if (found) yield { entryId: e.id, ts: e.ts, role, text, start: found.start, end: found.end };
  }
}
