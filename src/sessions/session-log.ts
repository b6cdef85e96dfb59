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
 * The writer of every session's `logs/session.log` (docs/files.md, The session log). `line` formats at once and
 * returns: nothing on the message path waits for the disk. Lines wait up to SESSION_LOG_FLUSH_MS, then one pass
 * appends each file's lines in one synchronous page-cache write (open, write, close: a few microseconds, cheaper in
 * CPU than three trips through the threadpool), never fsync'd, in the order given; the folder is made (0700) and
 * the file created (0600) by its first line. Before an append that would take the file past `maxBytes` it is
 * renamed to `session.log.1` (replacing the one before). A failed write is logged once per file and its lines are
 * dropped: the session log never fails a turn.
 */
export class SessionLogs {
  private pending = new Map<string, string[]>();
  private timer: NodeJS.Timeout | undefined;
  private readonly failed = new Set<string>();
  /**
   * The size of each file appended to, as this process wrote it (a file another process also appends to rotates
   * a little late). Forgotten after a failure, and all at once past SIZES_KEPT files.
   */
  private readonly sizes = new Map<string, number>();

  constructor(private readonly options: SessionLogsOptions) {}

  /** The log at `path` (a session's `SessionPaths.log`). */
  at(path: string): SessionLog {
    return {
      line: (kind, fields) => this.line(path, kind, fields),
      redactArguments: (json) => redactToolArguments(json, this.options.secrets()),
    };
  }

  line(path: string, kind: string, fields: Readonly<Record<string, LogFieldValue>>): void {
    const text = formatSessionLogLine(new Date(this.options.now()), kind, fields, this.options.secrets());
    const queued = this.pending.get(path);
    if (queued) queued.push(text);
    else this.pending.set(path, [text]);
    if (this.timer === undefined) {
      this.timer = setTimeout(() => this.writeAll(), SESSION_LOG_FLUSH_MS);
      this.timer.unref();
    }
  }

  /** Writes every line given so far now (the gateway's stop; tests). */
  async flush(): Promise<void> {
    this.writeAll();
  }

  private writeAll(): void {
    if (this.timer !== undefined) clearTimeout(this.timer);
    this.timer = undefined;
    const pending = this.pending;
    this.pending = new Map();
    for (const [path, lines] of pending) this.append(path, lines);
  }

  private append(path: string, lines: string[]): void {
    const data = `${lines.join("\n")}\n`;
    const bytes = Buffer.byteLength(data);
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

function writeAllSync(fd: number, text: string): void {
  const buffer = Buffer.from(text, "utf8");
  for (let at = 0; at < buffer.length; ) at += writeSync(fd, buffer, at, buffer.length - at);
}
