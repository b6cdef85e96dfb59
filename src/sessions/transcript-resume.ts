import { type FileHandle, open } from "node:fs/promises";
import { isMissingFile } from "./transcript-lines.js";
import { isBlankLine, isCompactionEntry, parseFirstLine, parseTranscriptEntry } from "./transcript-parse.js";
import type { CompactionEntry, TranscriptEntry, TranscriptHeader } from "./types.js";

/** A line the resume reader skipped. Line numbers are unknown when reading backwards: the byte offset says where. */
export interface ResumeBadLine {
  offset: number;
  reason: string;
}

export interface TranscriptResume {
  exists: boolean;
  /** From line 1, read on its own; undefined when missing or bad (`headerProblem` says why). */
  header?: TranscriptHeader;
  headerProblem?: string;
  /** The newest good compaction entry; undefined when the file has none. */
  compaction?: CompactionEntry;
  /** Good entries after `compaction` (or all of them when there is none), in file order. */
  entries: TranscriptEntry[];
  /** Bad lines met in the part that was read (line 1 and the tail after the compaction), in file order. */
  badLines: ResumeBadLine[];
  /** Bytes read from disk: the cost of the resume, which depends on the tail, not the file. */
  bytesRead: number;
}

const CHUNK = 64 * 1024;
const NEWLINE = 0x0a;

async function readAt(handle: FileHandle, position: number, length: number): Promise<Buffer> {
  const buffer = Buffer.alloc(length);
  let filled = 0;
  while (filled < length) {
    const { bytesRead } = await handle.read(buffer, filled, length - filled, position + filled);
    if (bytesRead === 0) break;
    filled += bytesRead;
  }
  return filled === length ? buffer : buffer.subarray(0, filled);
}

/** Line 1's bytes (without "\n"), reading forwards in chunks until the first "\n" or the end of the file. */
async function readFirstLine(handle: FileHandle, size: number): Promise<{ bytes: Buffer; read: number }> {
  const pieces: Buffer[] = [];
  let position = 0;
  // The header is short: start with 4 KiB and double, so a resume reads little more than the tail.
  let want = 4096;
  while (position < size) {
    const chunk = await readAt(handle, position, Math.min(want, size - position));
    want = Math.min(want * 2, CHUNK);
    if (chunk.length === 0) break;
    position += chunk.length;
    const nl = chunk.indexOf(NEWLINE);
    if (nl !== -1) {
      pieces.push(chunk.subarray(0, nl));
      break;
    }
    pieces.push(chunk);
  }
  return { bytes: Buffer.concat(pieces), read: position };
}

/**
 * What resuming a session needs: the header, the newest compaction entry and the entries after it.
 * Scans backwards from the end of the file in 64 KiB chunks and stops at the first (newest) good compaction
 * entry, so the cost depends on the size of the tail, not of the file. Lines that span chunks and a last line
 * cut short by a crash are handled; bad lines in the tail are skipped and reported, as by `readTranscript`.
 */
export async function readTranscriptForResume(path: string): Promise<TranscriptResume> {
  let handle: FileHandle;
  try {
    handle = await open(path, "r");
  } catch (error) {
    if (isMissingFile(error)) return { exists: false, entries: [], badLines: [], bytesRead: 0 };
    throw error;
  }
  try {
    const result: TranscriptResume = { exists: true, entries: [], badLines: [], bytesRead: 0 };
    const { size } = await handle.stat();
    if (size === 0) return result;

    const first = await readFirstLine(handle, size);
    result.bytesRead += first.read;
    const firstText = first.bytes.toString("utf8");
    const firstLine = isBlankLine(firstText) ? undefined : parseFirstLine(firstText);
    if (firstLine === undefined) result.headerProblem = "line 1 is empty";
    else if (firstLine.kind === "header") result.header = firstLine.header;
    else {
      result.headerProblem = firstLine.reason;
      if (firstLine.kind === "bad") result.badLines.push({ offset: 0, reason: firstLine.reason });
    }

    const newestFirst: TranscriptEntry[] = [];
    const badNewestFirst: ResumeBadLine[] = [];
    /** Handles one complete line (not line 1); true once the compaction is found and the scan can stop. */
    const takeLine = (bytes: Buffer, offset: number): boolean => {
      const text = bytes.toString("utf8");
      if (isBlankLine(text)) return false;
      const parsed = parseTranscriptEntry(text);
      if (!parsed.ok) {
        badNewestFirst.push({ offset, reason: parsed.reason });
        return false;
      }
      if (isCompactionEntry(parsed.value)) {
        result.compaction = parsed.value;
        return true;
      }
      newestFirst.push(parsed.value);
      return false;
    };

    // `carry` holds the bytes of the line that continues past the start of the chunk read last.
    let carry: Buffer[] = [];
    let position = size;
    let done = false;
    while (position > 0 && !done) {
      const start = Math.max(0, position - CHUNK);
      const chunk = await readAt(handle, start, position - start);
      result.bytesRead += chunk.length;
      let end = chunk.length;
      for (;;) {
        const nl = end > 0 ? chunk.lastIndexOf(NEWLINE, end - 1) : -1;
        if (nl === -1) {
          carry.unshift(chunk.subarray(0, end));
          break;
        }
        const bytes = Buffer.concat([chunk.subarray(nl + 1, end), ...carry]);
        carry = [];
        end = nl;
        if (takeLine(bytes, start + nl + 1)) {
          done = true;
          break;
        }
      }
      position = start;
    }
    // Reached the start of the file without a compaction: line 1 is the header (read above) or, when the
    // header was lost, possibly an ordinary entry.
    if (!done && firstLine?.kind === "entry") {
      if (isCompactionEntry(firstLine.entry)) result.compaction = firstLine.entry;
      else newestFirst.push(firstLine.entry);
    }
    result.entries = newestFirst.reverse();
    result.badLines.push(...badNewestFirst.reverse());
    return result;
  } finally {
    await handle.close();
  }
}
