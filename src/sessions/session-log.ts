import { closeSync, fstatSync, mkdirSync, openSync, renameSync, writeSync } from "node:fs";
import { dirname } from "node:path";
import type { Logger } from "../core/logger.js";
import { formatSessionLogLine, type LogFieldValue, SESSION_LOG_MAX_BYTES, shouldRotate } from "./log-line.js";
import { redactToolArguments } from "./log-redact.js";

/** How many files' sizes are kept between appends (then they are asked again). */
const SIZES_KEPT = 10_000;

/** One session's log, as its writers see it: a line of `kind` with `fields` (log-line.ts), written behind. */
export interface SessionLog {
  line(kind: string, fields: Readonly<Record<string, LogFieldValue>>): void;
  /** A tool call's arguments (JSON text) as a line may show them (log-redact.ts `redactToolArguments`). */
  redactArguments(json: string): string;
}

export interface SessionLogsOptions {
  /** The secret values no line may show (log-redact.ts `secretValues`), read at each line. */
  secrets(): readonly string[];
  now(): number;
  logger: Logger;
  /** Where `session.log` is rotated (default SESSION_LOG_MAX_BYTES). */
  maxBytes?: number;
}

/** How long lines wait to be written: the lines of every session given meanwhile go out in one pass. */
export const SESSION_LOG_FLUSH_MS = 1_000;

/**
 * How many files a pass writes before it lets the event loop run (each is an open, a write and a close, 10-50 µs
 * on a busy machine): a message that arrives during a pass waits for one slice, not for a hundred files.
 */
export const SESSION_LOG_FILES_PER_SLICE = 4;

/**
 * The writer of every session's `logs/session.log` (docs/files.md, The session log). `line` formats at once and
 * returns: nothing on the message path waits for the disk. Lines wait up to SESSION_LOG_FLUSH_MS, then one pass
 * appends each file's lines in one synchronous page-cache write (open, write, close: a few microseconds, cheaper in
 * CPU than three trips through the threadpool), SESSION_LOG_FILES_PER_SLICE files per turn of the event loop, never fsync'd,
 * in the order given (lines given during a pass wait for the next one); the folder is made (0700) and
 * the file created (0600) by its first line. Before an append that would take the file past `maxBytes` it is
 * renamed to `session.log.1` (replacing the one before). A failed write is logged once per file and its lines are
 * dropped: the session log never fails a turn.
 */
export class SessionLogs {
  /**
   * The lines given since the last pass began, by file, as the bytes they will be written as: a line is encoded
   * into its file's buffer at once, so what waits up to SESSION_LOG_FLUSH_MS is one buffer per file, not every
   * line's string (held for a second, those outlived the young generation and cost the collector copies and a
   * promotion each).
   */
  private pending = new Map<string, PendingBytes>();
  /** The lines of the pass under way, by file, not written yet (undefined while no pass runs). */
  private writing: Map<string, PendingBytes> | undefined;
  private timer: NodeJS.Timeout | undefined;
  private readonly failed = new Set<string>();
  /**
   * The size of each file appended to, as this process wrote it (a file another process also appends to rotates
   * a little late). Forgotten after a failure, and all at once past SIZES_KEPT files.
   */
  private readonly sizes = new Map<string, number>();
  private lastTime = { at: Number.NaN, iso: "" };

  constructor(private readonly options: SessionLogsOptions) {}

  /** The log at `path` (a session's `SessionPaths.log`). */
  at(path: string): SessionLog {
    return {
      line: (kind, fields) => this.line(path, kind, fields),
      redactArguments: (json) => redactToolArguments(json, this.options.secrets()),
    };
  }

  line(path: string, kind: string, fields: Readonly<Record<string, LogFieldValue>>): void {
    const text = formatSessionLogLine(this.isoTime(this.options.now()), kind, fields, this.options.secrets());
    let queued = this.pending.get(path);
    if (queued === undefined) {
      queued = new PendingBytes();
      this.pending.set(path, queued);
    }
    queued.addLine(text);
    if (this.timer === undefined && this.writing === undefined) {
      this.timer = setTimeout(() => this.startPass(), SESSION_LOG_FLUSH_MS);
      this.timer.unref();
    }
  }

  /** `now` as ISO text; a turn's lines mostly share their millisecond, and so the text. */
  private isoTime(now: number): string {
    if (now !== this.lastTime.at) this.lastTime = { at: now, iso: new Date(now).toISOString() };
    return this.lastTime.iso;
  }

  /** Writes every line given so far now, the pass under way included (the gateway's stop; tests). */
  async flush(): Promise<void> {
    if (this.timer !== undefined) clearTimeout(this.timer);
    this.timer = undefined;
    this.takePending();
    if (this.writing) {
      for (const [path, bytes] of this.writing) this.append(path, bytes);
      this.writing = undefined;
    }
  }

  /** The lines given so far join the pass (after any lines of the same file it still holds: order is kept). */
  private takePending(): void {
    if (this.pending.size === 0) return;
    const writing = this.writing ?? new Map<string, PendingBytes>();
    for (const [path, bytes] of this.pending) {
      const before = writing.get(path);
      if (before) before.addBytes(bytes.view());
      else writing.set(path, bytes);
    }
    this.pending = new Map();
    this.writing = writing;
  }

  /**
   * A timed pass: SESSION_LOG_FILES_PER_SLICE files at a time, the next slice after the I/O that came meanwhile (a message
   * arriving while a thousand sessions' logs are written waits for one slice, not for all of them).
   */
  private startPass(): void {
    this.timer = undefined;
    this.takePending();
    const slice = () => {
      const writing = this.writing;
      if (!writing) return;
      let n = 0;
      for (const [path, bytes] of writing) {
        if (n++ === SESSION_LOG_FILES_PER_SLICE) break;
        writing.delete(path);
        this.append(path, bytes);
      }
      if (writing.size > 0) {
        setImmediate(slice).unref();
        return;
      }
      this.writing = undefined;
      if (this.pending.size > 0 && this.timer === undefined) {
        this.timer = setTimeout(() => this.startPass(), SESSION_LOG_FLUSH_MS);
        this.timer.unref();
      }
    };
    slice();
  }

  private append(path: string, pending: PendingBytes): void {
    const data = pending.view();
    const bytes = data.length;
    try {
      let fd = openLog(path);
      try {
        // The size is asked once per file (in this process, or after a failure), then tracked.
        let size = this.sizes.get(path) ?? fstatSync(fd).size;
        if (shouldRotate(size, bytes, this.options.maxBytes ?? SESSION_LOG_MAX_BYTES)) {
          closeSync(fd);
          renameSync(path, `${path}.1`);
          fd = openLog(path);
          size = 0;
        }
        writeAllSync(fd, data);
        if (this.sizes.size >= SIZES_KEPT) this.sizes.clear();
        this.sizes.set(path, size + bytes);
      } finally {
        closeSync(fd);
      }
      this.failed.delete(path);
    } catch (error) {
      // The folder or the file may have been removed: the next append looks again.
      this.sizes.delete(path);
      if (this.failed.has(path)) return;
      this.failed.add(path);
      this.options.logger.warn("could not write the session log; its lines are dropped", {
        path,
        error: error instanceof Error ? error.message : String(error),
      });
    }
  }
}

/** Opens `path` to append (0600 when it is created), making its folder (0700) first when it is missing. */
function openLog(path: string): number {
  try {
    return openSync(path, "a", 0o600);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== "ENOENT") throw error;
    mkdirSync(dirname(path), { recursive: true, mode: 0o700 });
    return openSync(path, "a", 0o600);
  }
}

function writeAllSync(fd: number, buffer: Uint8Array): void {
  for (let at = 0; at < buffer.length; ) at += writeSync(fd, buffer, at, buffer.length - at);
}

/** Bytes of a file's first buffer (from Node's shared pool): a line or two; it doubles as lines come. */
const FIRST_BUFFER_BYTES = 256;

/** Lines waiting for one file, encoded (UTF-8, each ended by "\n") into one growing buffer. */
class PendingBytes {
  private buffer = Buffer.allocUnsafe(FIRST_BUFFER_BYTES);
  private length = 0;

  addLine(text: string): void {
    this.room(Buffer.byteLength(text, "utf8") + 1);
    this.length += this.buffer.write(text, this.length, "utf8");
    this.buffer[this.length++] = 0x0a;
  }

  addBytes(bytes: Uint8Array): void {
    this.room(bytes.length);
    this.buffer.set(bytes, this.length);
    this.length += bytes.length;
  }

  /** The bytes so far (a view: valid until the next add). */
  view(): Uint8Array {
    return this.buffer.subarray(0, this.length);
  }

  private room(adding: number): void {
    const needed = this.length + adding;
    if (needed <= this.buffer.length) return;
    const next = Buffer.allocUnsafe(Math.max(needed, this.buffer.length * 2));
    this.buffer.copy(next, 0, 0, this.length);
    this.buffer = next;
  }
}
