import { randomBytes } from "node:crypto";
import {
  closeSync,
  constants,
  fstatSync,
  fsync,
  ftruncateSync,
  openSync,
  readSync,
  writeSync,
} from "node:fs";
import { dirname } from "node:path";
import { promisify } from "node:util";
import { absolutePath } from "../core/absolute-path.js";
import { ClawdisError } from "../core/errors.js";
import { utf8Text } from "../core/utf8-text.js";
import { remakeFolderSync } from "./remake-folder.js";
import { isMissingFile, transcriptLines } from "./transcript-lines.js";
import { isBlankLine, parseFirstLine, parseTranscriptEntry } from "./transcript-parse.js";
import { TRANSCRIPT_VERSION, type TranscriptEntry, type TranscriptHeader } from "./types.js";

/**
 * Transcripts: append-only JSON Lines, one file per sessionId (SPEC section 2).
 *
 * Invariants:
 * - Nothing is ever rewritten here, and nothing written before an append is cut; compaction is an appended entry.
 *   An append the disk cut short (full) is taken back to where it began (`appendAll`).
 * - Line 1 is the header; it is written by the first append to a missing or empty file.
 * - Each append is one write of complete lines ("...\n"), serialized per file within this process, so lines
 *   of concurrent appends never interleave. If the file does not end in "\n" (a crash cut the last write short),
 *   the append starts with "\n" so the new entry never merges with the broken line.
 * - Readers skip (and count) lines that do not parse, and never start the file afresh because of them.
 * - An append never follows a symbolic link (O_NOFOLLOW) and writes only to a regular file: a transcript
 *   replaced by a link is refused (IO error, nothing written), so nothing is ever written outside the store
 *   directory through it. A file it creates is 0600, a directory 0700 (transcripts hold every message).
 * - A transcript is opened synchronously (no threadpool trip) and held as a raw descriptor, closed exactly once,
 *   after every write and fsync through it has settled, and never used after that (a closed number may already
 *   belong to another file). Only an fsync runs off the event loop.
 */

export { readTranscriptForResume, type TranscriptResume } from "./transcript-resume.js";

let lastIdTime = 0;
let idSequence = 0;

/**
 * A short id, unique and sortable by creation time within this process: 9 base-36 characters of epoch ms,
 * 3 of a per-millisecond sequence, 6 random. E.g. `0mjv0x4k0000a8f3kq`.
 */
export function newEntryId(): string {
  const now = Date.now();
  if (now === lastIdTime) {
    idSequence += 1;
  } else {
    lastIdTime = now;
    idSequence = 0;
  }
  const time = now.toString(36).padStart(9, "0");
  const sequence = (idSequence % 36 ** 3).toString(36).padStart(3, "0");
  const random = (randomUint32() % 36 ** 6).toString(36).padStart(6, "0");
  return `${time}${sequence}${random}`;
}

/** Random bytes taken 4 at a time from a pool refilled 4 KiB at once (one `randomBytes` call per 1,024 ids). */
let pool = Buffer.alloc(0);
let poolAt = 0;
function randomUint32(): number {
  if (poolAt + 4 > pool.length) {
    pool = randomBytes(4096);
    poolAt = 0;
  }
  const value = pool.readUInt32BE(poolAt);
  poolAt += 4;
  return value;
}

export function makeHeader(sessionId: string, sessionKey: string, now: Date): TranscriptHeader {
  return {
    type: "session",
    version: TRANSCRIPT_VERSION,
    id: sessionId,
    sessionKey,
    createdAt: now.toISOString(),
  };
}

export interface AppendOptions {
  /** Written first when the file is missing or empty. */
  header: TranscriptHeader;
  /** fsync after the write (accepted input that must survive a power cut). */
  fsync?: boolean;
}

/** The tail of the append chain of each file (absolute path), so appends to one file run one at a time. */
const appendChains = new Map<string, Promise<void>>();

/**
 * Appends entries as complete lines. Resolves when the bytes are written (and synced with `fsync`).
 * Serialized per file within the process; across processes the O_APPEND write keeps each call's bytes
 * together on local file systems, but two processes should not append to one session.
 */
export function appendTranscript(
  path: string,
  entries: TranscriptEntry[],
  options: AppendOptions,
): Promise<void> {
  return inAppendOrder(path, (absolute) => appendNow(absolute, entries, options));
}

/**
 * Runs `write` (given the absolute path) after every append to the same file already queued in this process,
 * and before any queued after it: the one order both `appendTranscript` and a held `TranscriptWriter` follow.
 */
export function inAppendOrder<T>(path: string, write: (absolute: string) => Promise<T>): Promise<T> {
  const key = absolutePath(path);
  const previous = appendChains.get(key) ?? Promise.resolve();
  const run = previous.then(() => write(key));
  const tail = run.then(
    () => {},
    () => {},
  );
  appendChains.set(key, tail);
  void tail.then(() => {
    if (appendChains.get(key) === tail) appendChains.delete(key);
  });
  return run;
}

/** Read/write, append, create (0600), and never through a symbolic link (not defined on Windows). */
const APPEND_FLAGS = constants.O_RDWR | constants.O_APPEND | constants.O_CREAT | (constants.O_NOFOLLOW ?? 0);

/** A transcript open to append to: its raw descriptor (the caller closes it, once) and its size at the open. */
export interface AppendTarget {
  fd: number;
  size: number;
}

/**
 * How often opening a transcript makes its folder again: deleting the sessions folder is a reset, and a folder
 * deleted over and over while turns run may be gone again between the mkdir and the open.
 */
const FOLDER_GONE_ATTEMPTS = 4;

/**
 * Opens a transcript to append to (creating it and its folder, 0600/0700); refuses links and non-regular files.
 * Synchronous: opening and `fstat`-ing a local file takes some 10-20 µs, where a trip through the threadpool waits
 * behind the fsyncs of other turns (with more sessions in use than transcripts held open, most messages open one).
 * The open never blocks on a named pipe (O_RDWR does not wait for a peer), and it is refused by the `fstat` that
 * follows.
 */
export function openForAppend(path: string): AppendTarget {
  for (let attempt = 1; ; attempt++) {
    try {
      return openRegular(path);
    } catch (error) {
      if (!isMissingFile(error) || attempt >= FOLDER_GONE_ATTEMPTS) throw error;
    }
    remakeFolderSync(dirname(path));
  }
}

/** The open file and its size (one fstat, also used to check that it is a regular file). */
function openRegular(path: string): AppendTarget {
  let fd: number;
  try {
    fd = openSync(path, APPEND_FLAGS, 0o600);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== "ELOOP") throw error;
    throw refused(path, "it is a symbolic link", error);
  }
  let isFile: boolean;
  let size: number;
  try {
    const info = fstatSync(fd);
    isFile = info.isFile();
    size = info.size;
  } catch (error) {
    closeSync(fd);
    throw error;
  }
  if (!isFile) {
    closeSync(fd);
    throw refused(path, "it is not a regular file");
  }
  return { fd, size };
}

function refused(path: string, why: string, cause?: unknown): ClawdisError {
  return new ClawdisError(
    "IO",
    `refused to append to the transcript ${path}: ${why}. A transcript must be a plain file in the store directory; nothing was written. Move it away (the session then starts afresh, as when a transcript is deleted)`,
    { cause },
  );
}

/** What goes before new lines: the header into an empty file, "\n" after a last line cut short, else nothing. */
export function appendPrefix(fd: number, size: number, header: TranscriptHeader): string {
  if (size === 0) return `${JSON.stringify(header)}\n`;
  // One byte from the page cache: synchronous, no threadpool trip (every first append after an open makes it).
  const last = Buffer.alloc(1);
  readSync(fd, last, 0, 1, size - 1);
  return last[0] === 0x0a ? "" : "\n";
}

/**
 * Writes `bytes` at the descriptor's offset (an O_APPEND one: at the end, whatever else was written meanwhile).
 * The write is synchronous: copying a few KB into the page cache takes about a microsecond, where an
 * asynchronous write costs some 20 µs of CPU in the threadpool hand-off (measured on this path); only an fsync
 * waits off the event loop. A write of nothing fails with EIO instead of looping.
 */
export function writeAll(fd: number, bytes: Buffer): void {
  let written = 0;
  while (written < bytes.length) {
    const wrote = writeSync(fd, bytes, written, bytes.length - written);
    if (wrote <= 0) throw Object.assign(new Error("write wrote nothing"), { code: "EIO" });
    written += wrote;
  }
}

/**
 * `writeAll` of lines appended to a file that was `size` bytes long, all or nothing: a write that fails part way
 * (the disk filled up in the middle of a line) is taken back by cutting the file to `size` again, so no line is
 * left cut short by it. The error is thrown either way; a take-back that fails too leaves the cut line for the next
 * append's "\n" (`appendPrefix`).
 */
export function appendAll(fd: number, bytes: Buffer, size: number): void {
  try {
    writeAll(fd, bytes);
  } catch (error) {
    try {
      ftruncateSync(fd, size);
    } catch {
      // The cut line stays; the next append starts on a line of its own.
    }
    throw error;
  }
}

/**
 * Flushes a descriptor to disk off the event loop (an fsync can take milliseconds). The caller keeps `fd` open
 * until it settles: a descriptor closed meanwhile could be reused by another open and flush the wrong file.
 */
export const fsyncDescriptor: (fd: number) => Promise<void> = promisify(fsync);

async function appendNow(path: string, entries: TranscriptEntry[], options: AppendOptions): Promise<void> {
  const { fd, size } = openForAppend(path);
  try {
    let text = appendPrefix(fd, size, options.header);
    for (const entry of entries) text += `${JSON.stringify(entry)}\n`;
    if (text.length === 0) return;
    // One write of complete lines; the descriptor is in append mode, so the bytes land at the end.
    appendAll(fd, Buffer.from(text, "utf8"), size);
    if (options.fsync) await fsyncDescriptor(fd);
  } finally {
    closeSync(fd);
  }
}

/** A line a reader skipped: 1-based line number, byte offset of its start, and what is wrong. */
export interface BadLine {
  line: number;
  offset: number;
  reason: string;
}

export interface TranscriptRead {
  exists: boolean;
  /** Undefined when the file is missing, empty, or line 1 is not a good header. */
  header?: TranscriptHeader;
  /** Every good entry in file order, unknown types included as they are. */
  entries: TranscriptEntry[];
  badLines: BadLine[];
  /** Why `header` is undefined on an existing, non-empty file. */
  headerProblem?: string;
}

export interface ReadTranscriptOptions {
  /** Stop reading (resolve with what was read so far) once aborted. */
  signal?: AbortSignal;
}

/** Reads a whole transcript, streaming. A missing file is an empty result with `exists: false`. */
export async function readTranscript(
  path: string,
  options: ReadTranscriptOptions = {},
): Promise<TranscriptRead> {
  const result: TranscriptRead = { exists: true, entries: [], badLines: [] };
  try {
    for await (const raw of transcriptLines(path)) {
      if (options.signal?.aborted) break;
      const text = utf8Text(raw.bytes);
      if (raw.line === 1) {
        if (isBlankLine(text)) {
          result.headerProblem = "line 1 is empty";
          continue;
        }
        const first = parseFirstLine(text);
        if (first.kind === "header") {
          result.header = first.header;
        } else if (first.kind === "entry") {
          result.headerProblem = first.reason;
          result.entries.push(first.entry);
        } else {
          result.headerProblem = first.reason;
          result.badLines.push({ line: 1, offset: 0, reason: first.reason });
        }
        continue;
      }
      if (isBlankLine(text)) continue;
      const entry = parseTranscriptEntry(text);
      if (entry.ok) result.entries.push(entry.value);
      else result.badLines.push({ line: raw.line, offset: raw.offset, reason: entry.reason });
    }
  } catch (error) {
    if (!isMissingFile(error)) throw error;
    return { exists: false, entries: [], badLines: [] };
  }
  return result;
}
