import { appendFile, mkdir, rename, stat } from "node:fs/promises";
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

/**
 * The writer of every session's `logs/session.log` (docs/files.md, The session log). `line` formats at once and
 * returns: nothing on the message path waits for the disk. Lines are appended behind, in the order given, per
 * file, in one append per batch (never fsync'd); the folder is made (0700) and the file created (0600) by the
 * first line. Before an append that would take the file past `maxBytes` it is renamed to `session.log.1`
 * (replacing the one before). A failed write is logged once per file and its lines are dropped: the session log
 * never fails a turn.
 */
export class SessionLogs {
  private readonly pending = new Map<string, string[]>();
  private readonly writing = new Map<string, Promise<void>>();
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
    if (queued) {
      queued.push(text);
      return;
    }
    this.pending.set(path, [text]);
    if (!this.writing.has(path)) this.writing.set(path, this.drain(path));
  }

  /** Resolves once every line given so far is written (or dropped after a failure). */
  async flush(): Promise<void> {
    while (this.writing.size > 0) await Promise.all([...this.writing.values()]);
  }

  private async drain(path: string): Promise<void> {
    // Off the message path: the lines of this tick go in one append.
    await new Promise((resolve) => setImmediate(resolve));
    try {
      for (let lines = this.take(path); lines; lines = this.take(path)) await this.append(path, lines);
    } finally {
      this.writing.delete(path);
      // A line given while the last append ran, after the loop looked.
      if (this.pending.has(path)) this.writing.set(path, this.drain(path));
    }
  }

  private take(path: string): string[] | undefined {
    const lines = this.pending.get(path);
    this.pending.delete(path);
    return lines;
  }

  private async append(path: string, lines: string[]): Promise<void> {
    const data = `${lines.join("\n")}\n`;
    const bytes = Buffer.byteLength(data);
    try {
      // Only the first append of a file (in this process, or after a failure) makes the folder and asks the size.
      let size = this.sizes.get(path);
      if (size === undefined) {
        await mkdir(dirname(path), { recursive: true, mode: 0o700 });
        size = await stat(path).then(
          (info) => info.size,
          () => 0,
        );
      }
      if (shouldRotate(size, bytes, this.options.maxBytes ?? SESSION_LOG_MAX_BYTES)) {
        await rename(path, `${path}.1`);
        size = 0;
      }
      await appendFile(path, data, { mode: 0o600 });
      if (this.sizes.size >= SIZES_KEPT) this.sizes.clear();
      this.sizes.set(path, size + bytes);
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
