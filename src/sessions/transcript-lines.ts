import { open } from "node:fs/promises";

/** One line of a transcript file as stored, without its "\n". */
export interface RawLine {
  /** 1-based line number. */
  line: number;
  /** Byte offset of the line's first byte. */
  offset: number;
  /** The line's bytes, without the terminating "\n". */
  bytes: Buffer;
  /** False only for a last line that has no "\n" (a crash cut the write short, or a hand edit). */
  terminated: boolean;
}

const NEWLINE = 0x0a;

/**
 * Streams a file line by line, splitting on "\n" only (the same rule as the backward reader, so line
 * boundaries agree; "\n" never occurs inside a multi-byte UTF-8 character). Memory is bounded by the longest
 * line, not the file. Throws ENOENT when the file does not exist (callers check `code`).
 */
export async function* transcriptLines(path: string): AsyncGenerator<RawLine> {
  const handle = await open(path, "r");
  try {
    let pending: Buffer[] = [];
    let pendingStart = 0;
    let position = 0;
    let line = 0;
    for await (const chunk of handle.createReadStream({ autoClose: false, highWaterMark: 256 * 1024 })) {
      const buffer = chunk as Buffer;
      let start = 0;
      for (;;) {
        const nl = buffer.indexOf(NEWLINE, start);
        if (nl === -1) break;
        const piece = buffer.subarray(start, nl);
        const bytes = pending.length > 0 ? Buffer.concat([...pending, piece]) : piece;
        line += 1;
        yield { line, offset: pendingStart, bytes, terminated: true };
        pending = [];
        start = nl + 1;
        pendingStart = position + start;
      }
      if (start < buffer.length) pending.push(buffer.subarray(start));
      position += buffer.length;
    }
    if (pending.length > 0) {
      line += 1;
      yield { line, offset: pendingStart, bytes: Buffer.concat(pending), terminated: false };
    }
  } finally {
    await handle.close();
  }
}

export function isMissingFile(error: unknown): boolean {
  return (error as NodeJS.ErrnoException | undefined)?.code === "ENOENT";
}
