import { open, stat } from "node:fs/promises";
import { readTranscriptForResume, type TranscriptResume } from "../sessions/transcript.js";
import { isCompactionEntry, parseTranscriptEntry } from "../sessions/transcript-parse.js";
import type { CompactionEntry, TranscriptEntry, TranscriptHeader } from "../sessions/types.js";

/** The file a tail was read from, as `stat` saw it: a change by anyone else shows as a different identity or size. */
export interface FileIdentity {
  dev: number;
  ino: number;
  size: number;
  mtimeMs: number;
}

/**
 * A session's resumed transcript tail held in memory between turns: what `readTranscriptForResume` returned,
 * kept equal to what it would return now by adding what this process appended. Only a clean read is kept (no
 * bad lines, no budget cut), and only while the tail stays within the read budget.
 */
export interface TailCache {
  path: string;
  file: FileIdentity;
  header?: TranscriptHeader;
  compaction?: CompactionEntry;
  entries: TranscriptEntry[];
  /** Bytes the tail spans (at most `maxBytes`, else it is dropped and the next read applies the budget). */
  bytes: number;
  maxBytes: number;
}

/** Whether the cached tail still stands for `path` as it is on disk. Pure. */
export function tailMatches(
  tail: TailCache | undefined,
  path: string,
  file: FileIdentity,
): tail is TailCache {
  return (
    tail !== undefined &&
    tail.path === path &&
    tail.file.dev === file.dev &&
    tail.file.ino === file.ino &&
    tail.file.size === file.size &&
    tail.file.mtimeMs === file.mtimeMs
  );
}

/** A tail from a full read, or undefined when that read is not one to keep (bad lines, a budget cut). Pure. */
export function tailFromRead(
  path: string,
  read: TranscriptResume,
  file: FileIdentity,
  maxBytes: number,
): TailCache | undefined {
  if (!read.exists || read.badLines.length > 0 || read.budgetCut || read.headerProblem !== undefined)
    return undefined;
  const bytes = Math.min(file.size, read.bytesRead);
  if (bytes > maxBytes) return undefined;
  return {
    path,
    file,
    ...(read.header ? { header: read.header } : {}),
    ...(read.compaction ? { compaction: read.compaction } : {}),
    entries: [...read.entries],
    bytes,
    maxBytes,
  };
}

/**
 * The tail after `lines` (the JSON lines this process appended, each without its "\n") grew the file from
 * `tail.file` to `after`; undefined when the file changed otherwise (its size is not the old size plus those
 * bytes), or the tail outgrew its budget. A compaction entry starts the tail over, as a read would. Pure.
 */
export function appendToTail(tail: TailCache, lines: string[], after: FileIdentity): TailCache | undefined {
  const added = lines.reduce((sum, line) => sum + Buffer.byteLength(line, "utf8") + 1, 0);
  if (after.dev !== tail.file.dev || after.ino !== tail.file.ino || after.size !== tail.file.size + added) {
    return undefined;
  }
  let { compaction, entries, bytes } = tail;
  entries = [...entries];
  for (const line of lines) {
    const parsed = parseTranscriptEntry(line);
    if (!parsed.ok) return undefined;
    const length = Buffer.byteLength(line, "utf8") + 1;
    if (isCompactionEntry(parsed.value)) {
      compaction = parsed.value;
      entries = [];
      bytes = length;
    } else {
      entries.push(parsed.value);
      bytes += length;
    }
  }
  if (bytes > tail.maxBytes) return undefined;
  return { ...tail, file: after, ...(compaction ? { compaction } : {}), entries, bytes };
}

/** The resume a cached tail stands for (fresh arrays: callers may not change the cache). Pure. */
export function resumeFromTail(tail: TailCache): TranscriptResume {
  return {
    exists: true,
    ...(tail.header ? { header: tail.header } : {}),
    ...(tail.compaction ? { compaction: tail.compaction } : {}),
    entries: [...tail.entries],
    badLines: [],
    bytesRead: 0,
  };
}

async function identity(path: string): Promise<FileIdentity | undefined> {
  try {
    const s = await stat(path);
    return { dev: s.dev, ino: s.ino, size: s.size, mtimeMs: s.mtimeMs };
  } catch {
    return undefined;
  }
}

/** Where a session's tail is kept (the warm session's slot). */
export interface TailHolder {
  tail?: TailCache;
}

/**
 * `readTranscriptForResume`, from the holder's tail when it still stands for the file (one `stat` instead of a
 * backward read), else from disk (and kept for next time when the read is a clean one).
 */
export async function readResumeCached(
  holder: TailHolder | undefined,
  path: string,
  maxBytes: number,
): Promise<TranscriptResume> {
  const before = await identity(path);
  if (holder && before && tailMatches(holder.tail, path, before) && holder.tail.maxBytes === maxBytes) {
    return resumeFromTail(holder.tail);
  }
  const read = await readTranscriptForResume(path, { maxBytes });
  if (holder) {
    const after = await identity(path);
    // Kept only when nothing changed the file during the read.
    const same = before && after && before.ino === after.ino && before.size === after.size;
    const tail = same ? tailFromRead(path, read, after, maxBytes) : undefined;
    if (tail) holder.tail = tail;
    else delete holder.tail;
  }
  return read;
}

/** After this process appended `entries` to `path`: the holder's tail follows, or is dropped when unsure. */
export async function noteAppended(
  holder: TailHolder | undefined,
  path: string,
  entries: TranscriptEntry[],
): Promise<void> {
  if (!holder?.tail) return;
  const tail = holder.tail;
  if (tail.path !== path) return;
  const after = await identity(path);
  const next = after
    ? appendToTail(
        tail,
        entries.map((e) => JSON.stringify(e)),
        after,
      )
    : undefined;
  // Another append may have replaced the tail meanwhile: only the one this started from is updated.
  if (holder.tail !== tail) return;
  if (next) holder.tail = next;
  else delete holder.tail;
}

/** Flushes the transcript to disk (fsync): the final save of a session before it is unloaded. */
export async function syncFile(path: string): Promise<void> {
  let handle: Awaited<ReturnType<typeof open>>;
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
