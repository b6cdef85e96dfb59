import { open } from "node:fs/promises";
import { utf8Text } from "../core/utf8-text.js";
import { type JournalRecord, MAX_RECORD_BYTES } from "./journal-state.js";

/** The size of the chunks the file is read in: a file up to this size comes in one, and is returned as `whole`. */
export const READ_CHUNK_BYTES = 1024 * 1024;

/**
 * Calls `onRecord` for each line that parses, streaming; returns how many did not, and, for a file of at most
 * READ_CHUNK_BYTES, its bytes (`whole`: what a caller compares with what it would write instead of the file). A
 * missing file is empty, with no `whole`. A line longer than twice MAX_RECORD_BYTES (garbage, or a file of zeros)
 * is skipped without being held whole.
 */
export async function readRecords(
  path: string,
  onRecord: (record: JournalRecord, bytes: number) => void,
): Promise<{ bad: number; records: number; whole?: Buffer }> {
  let bad = 0;
  let records = 0;
  const limit = 2 * MAX_RECORD_BYTES;
  let parts: Buffer[] = [];
  let partBytes = 0;
  let skipping = false;
  const take = (line: Buffer) => {
    if (line.length === 0) return;
    // Decoded once: the blank check and the parse share the text (a record can be a megabyte).
    const text = utf8Text(line);
    if (text.trim().length === 0) return;
    let record: JournalRecord;
    try {
      record = JSON.parse(text) as JournalRecord;
    } catch {
      bad++;
      return;
    }
    records++;
    onRecord(record, line.length + 1);
  };
  let stream: AsyncIterable<Buffer>;
  try {
    const handle = await open(path, "r");
    stream = handle.createReadStream({ highWaterMark: READ_CHUNK_BYTES });
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return { bad, records };
    throw error;
  }
  let chunks = 0;
  let first: Buffer | undefined;
  for await (const chunk of stream) {
    chunks++;
    first ??= chunk;
    let from = 0;
    for (;;) {
      const nl = chunk.indexOf(10, from);
      const piece = chunk.subarray(from, nl === -1 ? chunk.length : nl);
      if (!skipping) {
        parts.push(piece);
        partBytes += piece.length;
        if (partBytes > limit) {
          skipping = true;
          parts = [];
          partBytes = 0;
        }
      }
      if (nl === -1) break;
      if (skipping) bad++;
      else take(parts.length === 1 ? parts[0]! : Buffer.concat(parts));
      skipping = false;
      parts = [];
      partBytes = 0;
      from = nl + 1;
    }
  }
  if (skipping) bad++;
  else if (partBytes > 0) take(Buffer.concat(parts));
  if (chunks > 1) return { bad, records };
  return { bad, records, whole: first ?? Buffer.alloc(0) };
}
