import { readSync } from "node:fs";

/**
 * An open file as readers here see it: its raw descriptor, read with positioned `readSync` calls and never closed
 * by them. A `FileHandle` has one too, so either can be passed.
 */
export interface ReadableFile {
  readonly fd: number;
}

/** One line found by `readLinesBackward`. */
export interface BackwardLine {
  /** Byte offset of the line's first byte. */
  offset: number;
  /** The line's bytes without "\n"; undefined for a line longer than `maxLineBytes` (it was not kept). */
  bytes?: Buffer;
  /** The line's length in bytes, without "\n". */
  length: number;
}

export interface BackwardScan {
  /** Bytes read from the file so far. */
  bytesRead: number;
  /** True when `lowest()` ended the scan before `floor`: lines older than the last one yielded were not read. */
  cut: boolean;
}

export interface BackwardOptions {
  /** Where the scan ends: the byte before `floor` (when there is one) is taken to end a line. */
  floor: number;
  /** Where the scan starts, exclusive: the bytes `[floor, end)` are read. Usually the file size. */
  end: number;
  /**
   * The lowest offset at which a line may start to be yielded; asked again before every read and every line, so
   * the bound may change as lines are taken. Default `floor`. No byte below `lowest() - 1` is ever read.
   */
  lowest?: () => number;
  /** A longer line is scanned past without being kept in memory (yielded with `bytes` undefined). */
  maxLineBytes?: number;
  /** Filled in as the scan goes. */
  scan: BackwardScan;
}

const CHUNK = 64 * 1024;
const NEWLINE = 0x0a;

/**
 * Reads `length` bytes at `position`, fewer only at the end of the file. Synchronous underneath: a read of at most
 * one 64 KiB chunk from the page cache takes microseconds, where a trip through the threadpool waits behind the
 * fsyncs of other turns (every message's context read comes here).
 */
export async function readAt(file: ReadableFile, position: number, length: number): Promise<Buffer> {
  // Not from the shared pool: a slice kept by a caller would keep a whole pool slab alive.
  const buffer = Buffer.allocUnsafeSlow(length);
  let filled = 0;
  while (filled < length) {
    const bytesRead = readSync(file.fd, buffer, filled, length - filled, position + filled);
    if (bytesRead === 0) break;
    filled += bytesRead;
  }
  return filled === length ? buffer : buffer.subarray(0, filled);
}

/**
 * Yields the lines of the bytes `[floor, end)` of a file, newest first, reading backwards in 64 KiB chunks.
 * Lines are split on "\n" only ("\n" never occurs inside a multi-byte UTF-8 character); the piece after the last
 * "\n" before `end` is a line too (empty when `end` follows a "\n"; a last line cut short by a crash otherwise).
 *
 * Memory is bounded by `end - lowest()` and `maxLineBytes`, not by the file: a consumer that stops (`break`)
 * or a `lowest()` bound ends the reading. A file that shrinks during the scan ends it where the bytes run out.
 */
export async function* readLinesBackward(
  file: ReadableFile,
  options: BackwardOptions,
): AsyncGenerator<BackwardLine> {
  const { floor, end, scan } = options;
  const lowest = (): number => Math.max(floor, options.lowest?.() ?? floor);
  const maxLineBytes = options.maxLineBytes ?? Number.POSITIVE_INFINITY;
  // The line being assembled ends at `lineEnd`; its bytes read so far are `carry` (newest piece last).
  let carry: Buffer[] = [];
  let carryLength = 0;
  let skipping = false;
  let lineEnd = end;
  let position = end;

  const line = (offset: number, head: Buffer): BackwardLine => {
    const length = lineEnd - offset;
    if (skipping || length > maxLineBytes) return { offset, length };
    return { offset, bytes: carry.length > 0 ? Buffer.concat([head, ...carry]) : head, length };
  };

  for (;;) {
    const low = lowest();
    // To know that a line starts exactly at `low`, the byte before it must be read (unless `low` is the floor).
    const readFloor = low > floor ? low - 1 : floor;
    if (position <= readFloor) {
      if (position === floor && floor >= low) {
        // The line at `floor` (possibly empty) is complete: the byte before `floor` ends a line by contract.
        if (end > floor) yield line(floor, Buffer.alloc(0));
        return;
      }
      scan.cut = true;
      return;
    }
    const start = Math.max(readFloor, position - CHUNK);
    const chunk = await readAt(file, start, position - start);
    scan.bytesRead += chunk.length;
    if (chunk.length < position - start) return; // the file shrank under us: stop where the bytes ran out
    let segmentEnd = chunk.length;
    for (;;) {
      const nl = segmentEnd > 0 ? chunk.lastIndexOf(NEWLINE, segmentEnd - 1) : -1;
      if (nl === -1) {
        if (!skipping) {
          carry.unshift(chunk.subarray(0, segmentEnd));
          carryLength += segmentEnd;
          if (carryLength > maxLineBytes) {
            carry = [];
            carryLength = 0;
            skipping = true;
          }
        }
        break;
      }
      const offset = start + nl + 1;
      if (offset < lowest()) {
        scan.cut = true;
        return;
      }
      yield line(offset, chunk.subarray(nl + 1, segmentEnd));
      carry = [];
      carryLength = 0;
      skipping = false;
      lineEnd = start + nl;
      segmentEnd = nl;
    }
    position = start;
  }
}
