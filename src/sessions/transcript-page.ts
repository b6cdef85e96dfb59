import { closeSync, fstatSync } from "node:fs";
import { type BackwardScan, readAt, readLinesBackward } from "../core/read-lines-backward.js";
import { utf8Text } from "../core/utf8-text.js";
import { isBlankLine, parseTranscriptEntry } from "./transcript-parse.js";
import { firstLineBad, openToRead, type ResumeBadLine, readTranscriptStart } from "./transcript-resume.js";
import type { TranscriptEntry } from "./types.js";

/**
 * One page of a transcript's history, read backwards from `before` (the file's end at first): its cost depends on
 * the page asked for, never on the size of the file.
 */

/** The most one history page reads, whatever `limit` asks for: 16 parallel pages stay far from the heap limit. */
export const PAGE_MAX_BYTES = 8 * 1024 * 1024;

export interface PageOptions {
  /** How many kept entries the page holds at most. */
  limit: number;
  /** Which good entries count toward the page (the others are passed over). */
  keep: (entry: TranscriptEntry) => boolean;
  /** Read only what lies before this offset: a `before` of an earlier page. Default: the end of the file. */
  before?: number;
  /** Bytes the page may read (default PAGE_MAX_BYTES); its newest line is read even when longer. */
  maxBytes?: number;
}

export interface TranscriptPage {
  exists: boolean;
  /** The newest `limit` kept entries before `options.before`, in file order. */
  entries: TranscriptEntry[];
  /** Bad lines met in the part read, in file order (a line longer than `maxBytes` counts as one). */
  badLines: ResumeBadLine[];
  /** Where the previous (older) page ends: pass it as `before`. Undefined when this page reaches line 1. */
  before?: number;
  /** Set instead of a page when `options.before` is not the start of a line of this file. */
  beforeProblem?: string;
  /** Bytes read from disk: bounded by `maxBytes` (plus line 1 and one chunk), not by the file. */
  bytesRead: number;
}

/**
 * One page of a transcript, read backwards: the newest `limit` entries that `keep` accepts, before `before`.
 * Stops at `limit` entries, at `maxBytes` read, or at line 1; `before` of the result continues from there. A line
 * that does not parse is counted in `badLines`; a line 1 that is no header but a good entry (the header was lost)
 * counts as an entry, as in `readTranscript`.
 */
export async function readTranscriptPage(path: string, options: PageOptions): Promise<TranscriptPage> {
  const maxBytes = options.maxBytes ?? PAGE_MAX_BYTES;
  const file = openToRead(path);
  if (!file) return { exists: false, entries: [], badLines: [], bytesRead: 0 };
  try {
    const page: TranscriptPage = { exists: true, entries: [], badLines: [], bytesRead: 0 };
    const { size } = fstatSync(file.fd);
    const end = options.before ?? size;
    if (end < 0 || end > size || !Number.isSafeInteger(end)) {
      return { ...page, beforeProblem: `before must be an offset from 0 to ${size}` };
    }
    if (end > 0 && end < size) {
      const previous = await readAt(file, end - 1, 1);
      page.bytesRead += previous.length;
      if (previous[0] !== 0x0a)
        return { ...page, beforeProblem: `before (${end}) is not the start of a line` };
    }
    if (end === 0) return page;

    const start = await readTranscriptStart(file, size, maxBytes);
    page.bytesRead += start.read;
    // Line 1 is classified on its own; the scan covers the lines after it (all lines when it was too long).
    const floor = start.end ?? 0;
    const newestFirst: TranscriptEntry[] = [];
    const badNewestFirst: ResumeBadLine[] = [];
    const scan: BackwardScan = { bytesRead: 0, cut: false };
    let handled = 0;
    let oldest = end;
    let full = false;
    const lines = readLinesBackward(file, {
      floor,
      end: Math.max(end, floor),
      // The newest line of the page is read whatever its size (not kept when over maxBytes), the rest within it.
      lowest: () => (handled > 0 ? end - maxBytes : floor),
      maxLineBytes: maxBytes,
      scan,
    });
    for await (const line of lines) {
      // Line 1 when it was too long to classify (counted below), and the empty piece after a final "\n".
      if (line.offset === 0 || line.length === 0) continue;
      if (newestFirst.length >= options.limit) {
        full = true;
        break;
      }
      handled++;
      oldest = line.offset;
      if (line.bytes === undefined) {
        badNewestFirst.push({ offset: line.offset, reason: `longer than ${maxBytes} bytes: not read` });
        continue;
      }
      const text = utf8Text(line.bytes);
      if (isBlankLine(text)) continue;
      const parsed = parseTranscriptEntry(text);
      if (!parsed.ok) badNewestFirst.push({ offset: line.offset, reason: parsed.reason });
      else if (options.keep(parsed.value)) newestFirst.push(parsed.value);
    }
    page.bytesRead += scan.bytesRead;
    if (full || scan.cut) {
      page.before = oldest;
    } else if (start.first?.kind === "entry" && options.keep(start.first.entry)) {
      // The header was lost and line 1 is an entry of the page, or of the next one when this one is full.
      if (newestFirst.length < options.limit) newestFirst.push(start.first.entry);
      else page.before = floor;
    } else {
      const bad = firstLineBad(start);
      if (bad) badNewestFirst.push(bad);
    }
    page.entries = newestFirst.reverse();
    page.badLines = badNewestFirst.reverse();
    return page;
  } finally {
    closeSync(file.fd);
  }
}
