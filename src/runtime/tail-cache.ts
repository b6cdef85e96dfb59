import { type FileHandle, open, stat } from "node:fs/promises";
import { absolutePath } from "../core/absolute-path.js";
import { readTranscriptForResume, type TranscriptResume } from "../sessions/transcript.js";
import { isCompactionEntry, parseTranscriptEntry } from "../sessions/transcript-parse.js";
import { dropLeadingToolResults } from "../sessions/transcript-resume.js";
import type { FileIdentity, TranscriptWriter, WrittenLines } from "../sessions/transcript-writer.js";
import type { CompactionEntry, TranscriptEntry, TranscriptHeader } from "../sessions/types.js";

export type { FileIdentity } from "../sessions/transcript-writer.js";

/**
 * A session's resumed transcript tail held in memory between turns: what `readTranscriptForResume(path,
 * {maxBytes})` returns, kept equal to what it would return now by adding what this process appends — and, past
 * the read budget, by leaving out the oldest lines exactly as a read from disk would (the budget cut slides). It
 * knows where every line lies, so it is kept only for a file whose every line in the part read is a good entry
 * (no bad or blank line, a header, a last line ended by "\n").
 */
export interface TailCache {
  /** Absolute. */
  path: string;
  file: FileIdentity;
  header?: TranscriptHeader;
  /** Offset just past line 1. */
  floor: number;
  compaction?: { entry: CompactionEntry; offset: number };
  /** The entries after the compaction (else those within the budget), file order. */
  entries: TranscriptEntry[];
  /** Where each entry's line lies (`length` without the "\n"), parallel to `entries`. */
  places: LinePlace[];
  maxBytes: number;
}

export interface LinePlace {
  offset: number;
  length: number;
}

/** Whether the cached tail still stands for `path` as it is on disk. Pure. */
export function tailMatches(
  tail: TailCache | undefined,
  path: string,
  file: FileIdentity,
): tail is TailCache {
  return (
    tail !== undefined &&
    tail.path === absolutePath(path) &&
    tail.file.dev === file.dev &&
    tail.file.ino === file.ino &&
    tail.file.size === file.size &&
    tail.file.mtimeMs === file.mtimeMs
  );
}

/** Bytes of the transcript the tail stands for (what the registry's memory bound counts). Pure. */
export function tailBytes(tail: TailCache): number {
  const from = tail.compaction?.offset ?? tail.places[0]?.offset ?? tail.file.size;
  return tail.file.size - from;
}

/** Whether each line follows the one before it without a gap, from `from` to `end`. Pure. */
function contiguous(lines: LinePlace[], from: number, end: number): boolean {
  let at = from;
  for (const line of lines) {
    if (line.offset !== at) return false;
    at += line.length + 1;
  }
  return at === end;
}

/**
 * The budget cut applied to a tail whose file grew: the oldest lines that now start before `size - maxBytes`, and
 * the compaction before them, are left out, as a read from disk would. Undefined when even the newest line starts
 * before that (a read takes it by its hard cap alone: left to a read). A compaction with nothing after it stays
 * (a read takes it as its newest line). Pure.
 */
function slide(tail: TailCache): TailCache | undefined {
  if (tail.places.length === 0) return tail;
  const lowest = tail.file.size - tail.maxBytes;
  const first = tail.places.findIndex((line) => line.offset >= lowest);
  if (first === -1) return undefined;
  const compaction = tail.compaction && tail.compaction.offset >= lowest ? tail.compaction : undefined;
  if (first === 0 && compaction === tail.compaction) return tail;
  const { compaction: _left, ...rest } = tail;
  return {
    ...rest,
    ...(compaction ? { compaction } : {}),
    entries: tail.entries.slice(first),
    places: tail.places.slice(first),
  };
}

/** A tail from a read with `layout`, or undefined when that read is not one to keep. Pure. */
export function tailFromRead(path: string, read: TranscriptResume, maxBytes: number): TailCache | undefined {
  const layout = read.layout;
  if (!read.exists || !read.header || layout === undefined) return undefined;
  if (!layout.unchanged) return undefined;
  if (read.badLines.length > 0 || layout.blankLines > 0 || read.headerProblem !== undefined) return undefined;
  if (layout.floor === undefined) return undefined;
  const { size } = layout.file;
  const lowest = size - maxBytes;
  const cutAt = layout.lines[0]?.offset ?? size;
  // Where the lines must begin: after the compaction, at the budget cut, or right after line 1.
  let from: number;
  if (read.compaction && layout.compactionLine) {
    from = layout.compactionLine.offset + layout.compactionLine.length + 1;
  } else if (read.budgetCut) {
    if (cutAt < lowest) return undefined; // the newest line alone is over the budget
    from = cutAt;
  } else {
    from = layout.floor;
  }
  const places = layout.lines.map(({ offset, length }) => ({ offset, length }));
  if (!contiguous(places, from, size)) return undefined;
  const tail: TailCache = {
    path: absolutePath(path),
    file: layout.file,
    header: read.header,
    floor: layout.floor,
    ...(read.compaction && layout.compactionLine
      ? { compaction: { entry: read.compaction, offset: layout.compactionLine.offset } }
      : {}),
    entries: layout.lines.map((line) => line.entry),
    places,
    maxBytes,
  };
  return slide(tail);
}

/**
 * The tail after this process wrote `written` to its file; undefined when the file changed otherwise (it was not
 * as the tail left it, or grew by more than those bytes), when something was written before the lines (a header,
 * a "\n" after a line cut short), or when a line does not parse. A compaction entry starts the tail over, as a
 * read would. `tail` is given up to the result, which extends its arrays in place (a turn would otherwise copy its
 * whole context twice per line written): only the result is used afterwards. `tail` is left as it was when the
 * lines do not fit it (the file changed otherwise, a line does not parse); when they fit but the budget cut leaves
 * no line (undefined, too) it has them added, and is dropped as the result says. Pure otherwise (no I/O).
 */
export function appendToTail(tail: TailCache, written: WrittenLines): TailCache | undefined {
  const { before, after, prefix, lines } = written;
  if (prefix !== "" || !sameFile(tail.file, before) || after.dev !== before.dev || after.ino !== before.ino)
    return undefined;
  // Checked whole before anything is added, so that `tail` is untouched when the answer is undefined.
  const added: { entry: TranscriptEntry; place: LinePlace }[] = [];
  let offset = before.size;
  for (const text of lines) {
    const parsed = parseTranscriptEntry(text);
    if (!parsed.ok) return undefined;
    const length = Buffer.byteLength(text, "utf8");
    added.push({ entry: parsed.value, place: { offset, length } });
    offset += length + 1;
  }
  if (offset !== after.size) return undefined;
  let compaction = tail.compaction;
  let entries = tail.entries;
  let places = tail.places;
  for (const { entry, place } of added) {
    if (isCompactionEntry(entry)) {
      compaction = { entry, offset: place.offset };
      entries = [];
      places = [];
    } else {
      entries.push(entry);
      places.push(place);
    }
  }
  const { compaction: _old, ...rest } = tail;
  return slide({ ...rest, file: after, ...(compaction ? { compaction } : {}), entries, places });
}

/** The resume a cached tail stands for: what a read from disk would return (fresh arrays). Pure. */
export function resumeFromTail(tail: TailCache): TranscriptResume {
  const entries = [...tail.entries];
  const cut = tail.compaction === undefined && tail.file.size - tail.maxBytes > tail.floor;
  const result: TranscriptResume = {
    exists: true,
    ...(tail.header ? { header: tail.header } : {}),
    ...(tail.compaction ? { compaction: tail.compaction.entry } : {}),
    entries,
    badLines: [],
    bytesRead: 0,
  };
  if (cut) {
    const bytesLeftOut = Math.max(0, (tail.places[0]?.offset ?? tail.file.size) - tail.floor);
    result.budgetCut = { bytesLeftOut, toolResultsDropped: dropLeadingToolResults(entries) };
  }
  return result;
}

function sameFile(a: FileIdentity, b: FileIdentity): boolean {
  return a.dev === b.dev && a.ino === b.ino && a.size === b.size && a.mtimeMs === b.mtimeMs;
}

async function identity(path: string): Promise<FileIdentity | undefined> {
  try {
    const s = await stat(path);
    return { dev: s.dev, ino: s.ino, size: s.size, mtimeMs: s.mtimeMs };
  } catch {
    return undefined;
  }
}

/** What a warm session holds of its transcript: the tail, and the file held open to append to. */
export interface TailHolder {
  tail?: TailCache;
  transcript?: TranscriptWriter;
  /** Context reads for this holder so far (from disk or from the tail): whether a tail is kept depends on it. */
  resumes?: number;
}

/**
 * Whether a read from disk is kept as the holder's tail: from the holder's second context read on (a session used
 * again while warm), or at once when `keep` asks for it. A session touched once holds no tail: it would only be
 * garbage later (dropped at the limits or at passivation) that outlived the young generation. Pure.
 */
export function admitsTail(resumesBefore: number, keep: boolean): boolean {
  return keep || resumesBefore >= 1;
}

/**
 * The file as it is now: through the holder's open writer when it is for `path` and its file still has a name
 * (one `fstat`, no path lookup), else a `stat` of the path (a writer whose file was deleted or replaced opens the
 * path again at its next append).
 */
async function currentFile(holder: TailHolder | undefined, path: string): Promise<FileIdentity | undefined> {
  const writer = holder?.transcript;
  if (writer && writer.path === absolutePath(path) && !writer.isClosed) {
    const now = writer.current();
    if (now.linked) return now.file;
  }
  return identity(path);
}

/**
 * `readTranscriptForResume`, from the holder's tail when it still stands for the file (one `fstat` through the
 * open writer instead of a backward read), else from disk — kept for next time when the read is one to keep and
 * `admitsTail` admits it (from the holder's second read on; `options.keep`: at once, for a session loaded back
 * because it was in use).
 */
export async function readResumeCached(
  holder: TailHolder | undefined,
  path: string,
  maxBytes: number,
  options: { keep?: boolean } = {},
): Promise<TranscriptResume> {
  const resumesBefore = holder?.resumes ?? 0;
  if (holder) holder.resumes = resumesBefore + 1;
  if (holder?.tail) {
    const now = await currentFile(holder, path);
    if (now && tailMatches(holder.tail, path, now) && holder.tail.maxBytes === maxBytes) {
      return resumeFromTail(holder.tail);
    }
  }
  // A cold read goes through the writer's open descriptor when there is one for the file (no open, no close).
  const writer = holder?.transcript;
  const through =
    writer && writer.path === absolutePath(path) && !writer.isClosed && writer.current().linked
      ? writer
      : undefined;
  const keep = holder !== undefined && admitsTail(resumesBefore, options.keep === true);
  const read = through
    ? await through.whileHeld((handle) => readTranscriptForResume(path, { maxBytes, layout: keep, handle }))
    : await readTranscriptForResume(path, { maxBytes, layout: keep });
  if (holder) {
    const tail = keep ? tailFromRead(path, read, maxBytes) : undefined;
    if (tail) holder.tail = tail;
    else holder.tail = undefined;
  }
  const { layout: _layout, ...rest } = read;
  return rest;
}

/** After this process wrote `written` to `path`: the holder's tail follows, or is dropped when unsure. */
export function noteWritten(holder: TailHolder | undefined, path: string, written: WrittenLines): void {
  const tail = holder?.tail;
  if (!holder || !tail) return;
  if (tail.path !== absolutePath(path)) return;
  const next = appendToTail(tail, written);
  if (next) holder.tail = next;
  else holder.tail = undefined;
}

/** Flushes a transcript to disk (fsync) by its path: the final save of a session whose writer was closed. */
export async function syncFile(path: string): Promise<void> {
  let handle: FileHandle;
  try {
    handle = await open(path, "r");
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return;
    throw error;
  }
  try {
    await handle.sync();
  } finally {
    await handle.close();
  }
}
