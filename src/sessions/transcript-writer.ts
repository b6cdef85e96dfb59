import { fstatSync, writeSync } from "node:fs";
import type { FileHandle } from "node:fs/promises";
import { resolve } from "node:path";
import { type AppendOptions, appendPrefix, inAppendOrder, openForAppend } from "./transcript.js";
import type { TranscriptEntry } from "./types.js";

/** A file as `fstat` sees it: a change by anyone else shows as a different identity, size or time. */
export interface FileIdentity {
  dev: number;
  ino: number;
  size: number;
  mtimeMs: number;
}

/** What one append did: the file before and after it, and the lines written (each without its "\n"). */
export interface WrittenLines {
  before: FileIdentity;
  after: FileIdentity;
  /** Written before the lines: the header into an empty file, "\n" after a last line cut short, else "". */
  prefix: string;
  lines: string[];
}

/**
 * Writes `bytes` to an O_APPEND descriptor: they land at the end, whatever else was written meanwhile. The write
 * is synchronous: copying a few KB into the page cache takes about a microsecond, where an asynchronous write
 * costs some 20 µs of CPU in the threadpool hand-off (measured on this path); only an fsync waits off the event
 * loop.
 */
function writeAll(fd: number, bytes: Buffer): void {
  let written = 0;
  while (written < bytes.length) written += writeSync(fd, bytes, written, bytes.length - written);
}

/**
 * A transcript held open by a warm session, so a turn appends without opening, `stat`-ing and reading the file
 * again for every append. The guarantees are those of `appendTranscript` (transcript.ts): complete lines in one
 * O_APPEND write, in this process's append order for the file; the header into an empty file; "\n" first after a
 * last line cut short (looked at again whenever the file is not the size this writer left it); never through a
 * link, only to a regular file, created 0600.
 *
 * The descriptor follows the path: when the file it holds was deleted or replaced (it has no name any more), the
 * next append opens the path again (creating it, as `appendTranscript` would), so nothing is written into a file
 * nobody can see. Checks go through the descriptor (`fstat`, no path lookup, microseconds). A file moved away
 * under another name is not noticed (it still has a name); two processes should not append to one session.
 */
export class TranscriptWriter {
  /** `close` was called (appends queued before it still run). */
  private closed = false;
  /** The descriptor is closed. */
  private released = false;
  /** Whether the file ended in "\n" at `size` when this writer last wrote (or looked). */
  private clean = false;

  private constructor(
    /** Absolute. */
    readonly path: string,
    private handle: FileHandle,
    private size: number,
  ) {}

  /** Opens `path` to append to (creating it and its folder); refuses links and files that are not regular. */
  static async open(path: string): Promise<TranscriptWriter> {
    const absolute = resolve(path);
    const { handle, size } = await openForAppend(absolute);
    return new TranscriptWriter(absolute, handle, size);
  }

  get isClosed(): boolean {
    return this.closed;
  }

  /** The open file as it is now, and whether it still has a name (false once deleted or replaced). */
  current(): { file: FileIdentity; linked: boolean } {
    const s = fstatSync(this.handle.fd);
    return { file: { dev: s.dev, ino: s.ino, size: s.size, mtimeMs: s.mtimeMs }, linked: s.nlink > 0 };
  }

  /** Appends `entries` as complete lines; resolves when written (and synced with `fsync`). */
  append(entries: TranscriptEntry[], options: AppendOptions): Promise<WrittenLines> {
    return inAppendOrder(this.path, async () => {
      if (this.released) throw new Error(`the transcript writer of ${this.path} is closed`);
      let now = this.current();
      if (!now.linked) {
        await this.handle.close();
        ({ handle: this.handle, size: this.size } = await openForAppend(this.path));
        this.clean = false;
        now = this.current();
      }
      const before = now.file;
      const prefix =
        this.clean && before.size === this.size && before.size > 0
          ? ""
          : await appendPrefix(this.handle, before.size, options.header);
      const lines = entries.map((entry) => JSON.stringify(entry));
      let text = prefix;
      for (const line of lines) text += `${line}\n`;
      try {
        writeAll(this.handle.fd, Buffer.from(text, "utf8"));
        if (options.fsync) await this.handle.sync();
      } catch (error) {
        // A short write may have left a line cut short: the next append looks at the last byte again.
        this.clean = false;
        throw error;
      }
      const after = this.current().file;
      this.size = after.size;
      this.clean = true;
      return { before, after, prefix, lines };
    });
  }

  /**
   * Runs `read` with the open descriptor (it may read, never write or close it) between this process's appends
   * to the file: none of ours lands while it reads. The descriptor may have been opened read/write.
   */
  whileHeld<T>(read: (handle: FileHandle) => Promise<T>): Promise<T> {
    return inAppendOrder(this.path, async () => {
      if (this.released) throw new Error(`the transcript writer of ${this.path} is closed`);
      return read(this.handle);
    });
  }

  /** Flushes what was written to disk (fsync). */
  sync(): Promise<void> {
    return inAppendOrder(this.path, async () => {
      if (!this.released) await this.handle.sync();
    });
  }

  /** Closes the descriptor once the appends queued before it are done. Idempotent. */
  close(): Promise<void> {
    if (this.closed) return Promise.resolve();
    this.closed = true;
    return inAppendOrder(this.path, async () => {
      this.released = true;
      await this.handle.close();
    });
  }
}
