import { type FileHandle, open } from "node:fs/promises";
import type { Logger } from "../core/logger.js";
import type { UnsyncedReply } from "../sessions/journal.js";
import { appendTranscript, makeHeader } from "../sessions/transcript.js";
import type { TranscriptEntry } from "../sessions/types.js";
import { syncFile } from "./tail-cache.js";

/** How much of a transcript is read at a time, from its end, looking for entries. */
const CHUNK_BYTES = 1024 * 1024;

/**
 * At the journal's open, for the `reply` records no `synced` covered (journal.ts): each transcript behind them is
 * made to hold their entries on disk. An entry already in the file (found by its id, from the end of the file
 * back) is left as it is; one that is not (a power cut took lines written without fsync) is appended again, in
 * the order the records hold, with a warning. Then the file is fsync'd either way: after a kill -9 the lines are
 * there but maybe not on disk. Throws when a transcript cannot be read or written (the journal then keeps the
 * records and tries again before it would drop them).
 */
export async function repairReplies(
  replies: UnsyncedReply[],
  deps: { transcriptPath: (sessionId: string) => string; logger: Logger; now: () => number },
): Promise<void> {
  const bySession = new Map<string, { sessionKey: string; entries: Map<string, TranscriptEntry> }>();
  for (const reply of replies) {
    let session = bySession.get(reply.sessionId);
    if (!session) {
      session = { sessionKey: reply.sessionKey, entries: new Map() };
      bySession.set(reply.sessionId, session);
    }
    for (const entry of reply.entries)
      if (!session.entries.has(entry.id)) session.entries.set(entry.id, entry);
  }
  for (const [sessionId, session] of bySession) {
    const path = deps.transcriptPath(sessionId);
    const present = await idsInFile(path, [...session.entries.keys()]);
    const missing = [...session.entries.values()].filter((entry) => !present.has(entry.id));
    if (missing.length === 0) {
      await syncFile(path);
      continue;
    }
    deps.logger.warn("transcript lines that were not on disk were written again from the journal", {
      path,
      entries: missing.length,
    });
    await appendTranscript(path, missing, {
      header: makeHeader(sessionId, session.sessionKey, new Date(deps.now())),
      fsync: true,
    });
  }
}

/** Which of `ids` occur in the file (as JSON strings), read from its end back until all are found. */
async function idsInFile(path: string, ids: string[]): Promise<Set<string>> {
  const found = new Set<string>();
  let handle: FileHandle;
  try {
    handle = await open(path, "r");
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return found;
    throw error;
  }
  try {
    const needles = ids.map((id) => ({ id, bytes: Buffer.from(JSON.stringify(id)) }));
    // A needle may span two chunks: each chunk is searched with the start of the one after it.
    const overlap = Math.max(0, ...needles.map((n) => n.bytes.length - 1));
    let end = (await handle.stat()).size;
    let carry = Buffer.alloc(0);
    while (end > 0 && found.size < ids.length) {
      const start = Math.max(0, end - CHUNK_BYTES);
      const chunk = Buffer.alloc(end - start + carry.length);
      let read = 0;
      while (read < end - start) {
        const { bytesRead } = await handle.read(chunk, read, end - start - read, start + read);
        if (bytesRead === 0) break;
        read += bytesRead;
      }
      carry.copy(chunk, end - start);
      for (const needle of needles)
        if (!found.has(needle.id) && chunk.includes(needle.bytes)) found.add(needle.id);
      carry = Buffer.from(chunk.subarray(0, Math.min(overlap, end - start)));
      end = start;
    }
  } finally {
    await handle.close();
  }
  return found;
}
