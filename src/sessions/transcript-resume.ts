import { closeSync, constants, fstatSync, openSync } from "node:fs";
import {
  type BackwardScan,
  type ReadableFile,
  readAt,
  readLinesBackward,
} from "../core/read-lines-backward.js";
import { utf8Text } from "../core/utf8-text.js";
import type { FileIdentity } from "./file-identity.js";
import { isMissingFile } from "./transcript-lines.js";
import {
  type FirstLine,
  isBlankLine,
  isCompactionEntry,
  parseFirstLine,
  parseTranscriptEntry,
} from "./transcript-parse.js";
import type { CompactionEntry, StoredChatMessage, TranscriptEntry, TranscriptHeader } from "./types.js";

/**
 * The backward reader of a transcript for resuming a session (`readTranscriptForResume`), and what it shares with
 * the history page reader (transcript-page.ts): opening the file, reading line 1. Both readers read from the end
 * of the file and stop at what was asked for, so their cost (bytes read, memory) depends on the request, never
 * on the size of the file.
 */

/** A line a backward reader skipped. Line numbers are unknown when reading backwards: the byte offset says where. */
export interface ResumeBadLine {
  offset: number;
  reason: string;
}

/** Bytes of transcript per token of the model's window: JSON lines carry ids, timestamps and meta besides text. */
export const RESUME_BYTES_PER_TOKEN = 4;
/** How many windows' worth of bytes a resume reads: room for the line overhead, so a full window still fits. */
export const RESUME_SAFETY_FACTOR = 2;
/** The least a resume reads, however small the window. */
export const RESUME_MIN_BYTES = 64 * 1024;
/** The most a resume reads, however large the window; also the longest newest entry and line 1 it reads. */
export const RESUME_HARD_CAP_BYTES = 16 * 1024 * 1024;

/** The resume budget for a model window: `contextTokens` × 4 bytes × 2, within [64 KiB, 16 MiB]. Pure. */
export function resumeBudgetBytes(contextTokens: number): number {
  const wanted = Math.ceil(contextTokens * RESUME_BYTES_PER_TOKEN * RESUME_SAFETY_FACTOR);
  if (!Number.isFinite(wanted)) return RESUME_HARD_CAP_BYTES;
  return Math.min(RESUME_HARD_CAP_BYTES, Math.max(RESUME_MIN_BYTES, wanted));
}

export interface ResumeOptions {
  /**
   * Read only entries that start within this many bytes of the end of the file (default: the hard cap). The
   * session runner passes `resumeBudgetBytes(contextTokens)`.
   */
  maxBytes?: number;
  /** The newest good entry, and line 1, are read up to this size even past `maxBytes`. Default 16 MiB. */
  hardCapBytes?: number;
  /** Also say where each entry read lies in the file (`layout`), for a cache that follows later appends. */
  layout?: boolean;
  /** Read through this open descriptor of `path` (left open: never closed here) instead of opening the path. */
  handle?: ReadableFile;
}

/** One good entry read, and where its line lies (`length` without the "\n"). */
export interface ResumeLine {
  entry: TranscriptEntry;
  offset: number;
  length: number;
}

/** Where what a resume read lies in the file (with `options.layout`). */
export interface ResumeLayout {
  /** The file through the open descriptor when the read began. */
  file: FileIdentity;
  /** Whether size and time were the same when the read ended (nothing wrote to the file meanwhile). */
  unchanged: boolean;
  /** Offset just past line 1; undefined when line 1 was too long to read. */
  floor?: number;
  /** The compaction entry's line, when `compaction` is set. */
  compactionLine?: { offset: number; length: number };
  /** Every good entry read after the compaction (all read when there is none), file order, before the tool results at a budget cut were dropped. */
  lines: ResumeLine[];
  /** Blank lines met in the part read (not counting the empty piece after the final "\n"). */
  blankLines: number;
}

export interface TranscriptResume {
  exists: boolean;
  /** From line 1, read on its own; undefined when missing or bad (`headerProblem` says why). */
  header?: TranscriptHeader;
  headerProblem?: string;
  /** The newest good compaction entry; undefined when the file has none or the budget ended the scan first. */
  compaction?: CompactionEntry;
  /** Good entries after `compaction` (or all of them when there is none), in file order. */
  entries: TranscriptEntry[];
  /** Bad lines met in the part that was read (line 1 and the tail after the compaction), in file order. */
  badLines: ResumeBadLine[];
  /** Bytes read from disk: the cost of the resume, which depends on the tail, not the file. */
  bytesRead: number;
  /**
   * Set when the budget ended the scan before the newest compaction entry and the start of the file: the bytes
   * between line 1 and the oldest entry read were left out (not read), and so were tool results at the cut whose
   * call was left out.
   */
  budgetCut?: { bytesLeftOut: number; toolResultsDropped: number };
  /** With `options.layout`, for a file that exists and is not empty. */
  layout?: ResumeLayout;
}

/** Line 1 as read on its own: classified, where it ends, and what reading it cost. */
export interface TranscriptStart {
  first?: FirstLine;
  /** Why line 1 is no header; undefined when it is one. */
  problem?: string;
  /** Offset just past line 1's "\n" (the file size when it has none); undefined when line 1 was too long to read. */
  end?: number;
  read: number;
}

/** Reads and classifies line 1, forwards from 4 KiB doubling to 64 KiB chunks, at most about `cap` bytes of it. */
export async function readTranscriptStart(
  file: ReadableFile,
  size: number,
  cap: number,
): Promise<TranscriptStart> {
  const pieces: Buffer[] = [];
  let read = 0;
  let want = 4096;
  let end: number | undefined;
  while (read < size && read <= cap) {
    const chunk = await readAt(file, read, Math.min(want, size - read));
    if (chunk.length === 0) break;
    want = Math.min(want * 2, 64 * 1024);
    const nl = chunk.indexOf(0x0a);
    pieces.push(nl === -1 ? chunk : chunk.subarray(0, nl));
    if (nl !== -1) end = read + nl + 1;
    read += chunk.length;
    if (nl !== -1) break;
  }
  // No "\n" at all: the whole file is line 1.
  if (end === undefined && read >= size) end = size;
  const bytes = Buffer.concat(pieces);
  if (end === undefined || bytes.length > cap) {
    return { problem: `line 1 is longer than ${cap} bytes: not read`, read };
  }
  const text = utf8Text(bytes);
  if (isBlankLine(text)) return { problem: "line 1 is empty", end, read };
  const first = parseFirstLine(text);
  return { first, end, read, ...(first.kind === "header" ? {} : { problem: first.reason }) };
}

/** The bad line that line 1 counts as when it is neither header nor entry, or too long to read (blank is not bad). */
export function firstLineBad(start: TranscriptStart): ResumeBadLine | undefined {
  if (start.first?.kind === "bad") return { offset: 0, reason: start.first.reason };
  if (start.end === undefined && start.problem !== undefined) return { offset: 0, reason: start.problem };
  return undefined;
}

function isToolResult(entry: TranscriptEntry): boolean {
  return entry.type === "message" && (entry as { message?: StoredChatMessage }).message?.role === "tool";
}

/**
 * Drops the tool results at the start of `entries` (file order) that come before any other message: at a budget
 * cut their call was left out, and a result without its call must not reach the model. Other entry types in
 * between are kept. Returns how many were dropped.
 */
export function dropLeadingToolResults(entries: TranscriptEntry[]): number {
  let dropped = 0;
  for (let i = 0; i < entries.length; ) {
    const entry = entries[i] as TranscriptEntry;
    if (isToolResult(entry)) {
      entries.splice(i, 1);
      dropped++;
      continue;
    }
    if (entry.type === "message") break;
    i++;
  }
  return dropped;
}

/**
 * Read only, and never waiting: O_NONBLOCK makes the open of a named pipe return at once (a plain open would block
 * the event loop until a writer came; its size then reads as 0, an empty transcript) and changes nothing for a
 * regular file. Synchronous: microseconds from the page cache, where a trip through the threadpool waits behind
 * the fsyncs of other turns (a context read that no warm writer serves opens the file here). No file: undefined.
 */
export function openToRead(path: string): ReadableFile | undefined {
  try {
    return { fd: openSync(path, constants.O_RDONLY | (constants.O_NONBLOCK ?? 0)) };
  } catch (error) {
    if (isMissingFile(error)) return undefined;
    throw error;
  }
}

/**
 * What resuming a session needs: the header, the newest compaction entry and the entries after it.
 * Scans backwards from the end of the file in 64 KiB chunks and stops at the first (newest) good compaction
 * entry, at the start of the file, or at the budget (`options.maxBytes`), whichever comes first; so the cost
 * depends on the tail and the budget, never on the file. The newest good entry is read even when it alone is
 * larger than the budget (up to the hard cap), so a long last message is not lost. Lines that span chunks and a
 * last line cut short by a crash are handled; bad lines in the part read are skipped and reported.
 */
export async function readTranscriptForResume(
  path: string,
  options: ResumeOptions = {},
): Promise<TranscriptResume> {
  const hardCap = options.hardCapBytes ?? RESUME_HARD_CAP_BYTES;
  const maxBytes = options.maxBytes ?? hardCap;
  const file = options.handle ?? openToRead(path);
  if (!file) return { exists: false, entries: [], badLines: [], bytesRead: 0 };
  try {
    const result: TranscriptResume = { exists: true, entries: [], badLines: [], bytesRead: 0 };
    // Through the open descriptor: no path lookup, no trip through the threadpool.
    const info = fstatSync(file.fd);
    const size = info.size;
    if (size === 0) return result;

    const start = await readTranscriptStart(file, size, Math.max(hardCap, maxBytes));
    result.bytesRead += start.read;
    if (start.first?.kind === "header") result.header = start.first.header;
    if (start.problem !== undefined) result.headerProblem = start.problem;
    const badFirst = firstLineBad(start);
    if (badFirst) result.badLines.push(badFirst);

    const newestFirst: TranscriptEntry[] = [];
    const badNewestFirst: ResumeBadLine[] = [];
    const floor = start.end ?? 0;
    const scan: BackwardScan = { bytesRead: 0, cut: false };
    let oldestRead = size;
    let found = false;
    const placesNewestFirst: { offset: number; length: number }[] = [];
    let blankLines = 0;
    let compactionLine: { offset: number; length: number } | undefined;
    const lines = readLinesBackward(file, {
      floor,
      end: size,
      // Until one good entry is in hand the hard cap applies, then the budget.
      lowest: () => size - (newestFirst.length > 0 ? maxBytes : Math.max(maxBytes, hardCap)),
      scan,
    });
    for await (const line of lines) {
      // Line 1 was classified above; met here only when it was too long to read there.
      if (line.offset === 0 || line.bytes === undefined) continue;
      oldestRead = line.offset;
      const text = utf8Text(line.bytes);
      if (isBlankLine(text)) {
        if (line.offset < size) blankLines++;
        continue;
      }
      const parsed = parseTranscriptEntry(text);
      if (!parsed.ok) {
        badNewestFirst.push({ offset: line.offset, reason: parsed.reason });
        continue;
      }
      if (isCompactionEntry(parsed.value)) {
        result.compaction = parsed.value;
        compactionLine = { offset: line.offset, length: line.length };
        found = true;
        break;
      }
      newestFirst.push(parsed.value);
      placesNewestFirst.push({ offset: line.offset, length: line.length });
    }
    result.bytesRead += scan.bytesRead;
    // Reached the start of the file without a compaction: line 1 is the header (read above) or, when the
    // header was lost, possibly an ordinary entry.
    if (!found && !scan.cut && start.first?.kind === "entry") {
      if (isCompactionEntry(start.first.entry)) result.compaction = start.first.entry;
      else newestFirst.push(start.first.entry);
    }
    if (options.layout) {
      // Only entries with a known place (line 1 as an entry has none: a lost header is never cached anyway).
      const places = placesNewestFirst.reverse();
      const entries = newestFirst.slice(0, places.length).reverse();
      const end = fstatSync(file.fd);
      result.layout = {
        file: { dev: info.dev, ino: info.ino, size, mtimeMs: info.mtimeMs },
        unchanged: end.size === size && end.mtimeMs === info.mtimeMs && end.ino === info.ino,
        ...(start.end !== undefined ? { floor: start.end } : {}),
        ...(compactionLine ? { compactionLine } : {}),
        lines: entries.map((entry, i) => ({ entry, ...(places[i] as { offset: number; length: number }) })),
        blankLines,
      };
    }
    result.entries = newestFirst.reverse();
    result.badLines.push(...badNewestFirst.reverse());
    if (scan.cut && !found) {
      const toolResultsDropped = dropLeadingToolResults(result.entries);
      result.budgetCut = { bytesLeftOut: Math.max(0, oldestRead - floor), toolResultsDropped };
    }
    return result;
  } finally {
    if (!options.handle) closeSync(file.fd);
  }
}
