import { closeSync, fstatSync } from "node:fs";
import { resolve } from "node:path";
import type { ReadableFile } from "../core/read-lines-backward.js";
import type { FileIdentity } from "./file-identity.js";
import {
  type AppendOptions,
  appendAll,
  appendPrefix,
  fsyncDescriptor,
  inAppendOrder,
  openForAppend,
} from "./transcript.js";
import type { TranscriptEntry } from "./types.js";

export type { FileIdentity } from "./file-identity.js";

/** What one append did: the file before and after it, and the lines written (each without its "\n"). */
export interface WrittenLines {
  before: FileIdentity;
  after: FileIdentity;
  /** Written before the lines: the header into an empty file, "\n" after a last line cut short, else "". */
  prefix: string;
  lines: string[];
}

/** What `fd` holds while no file is open. */
const NO_FILE = -1;

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
 *
 * The file is held as a raw descriptor, opened synchronously (`openForAppend`): no `FileHandle`, no threadpool
 * trip to open, write or close; only an fsync runs off the event loop. Every use of the descriptor runs in the
 * file's append order, so `close` (closing it exactly once) never overtakes a write, fsync or `whileHeld` read.
 */
export class TranscriptWriter {
  /** `close` was called (appends queued before it still run). */
  private closed = false;
  /** The descriptor is closed for good: nothing may use `fd` any more (its number may belong to another file). */
  private released = false;
  /** Whether the file ended in "\n" at `size` when this writer last wrote (or looked). */
  private clean = false;

  private constructor(
    /** Absolute. */
    readonly path: string,
    /** The raw descriptor, or NO_FILE while none is held (opening the path again failed; the next append retries). */
    private fd: number,
    private size: number,
  ) {}

  /** Opens `path` to append to (creating it and its folder); refuses links and files that are not regular. */
  static openSync(path: string): TranscriptWriter {
    const absolute = resolve(path);
    const { fd, size } = openForAppend(absolute);
    return new TranscriptWriter(absolute, fd, size);
  }

  /** `openSync` for callers that await: already settled when it returns (a refusal rejects). */
  static async open(path: string): Promise<TranscriptWriter> {
    return TranscriptWriter.openSync(path);
  }

  get isClosed(): boolean {
    return this.closed;
  }

  /**
   * The open file as it is now, and whether it still has a name (false once deleted or replaced, and while no
   * descriptor is held). Throws once the descriptor is closed for good.
   */
  current(): { file: FileIdentity; linked: boolean } {
    if (this.released) throw this.closedError();
    if (this.fd === NO_FILE) return { file: { dev: 0, ino: 0, size: 0, mtimeMs: 0 }, linked: false };
    const s = fstatSync(this.fd);
    return { file: { dev: s.dev, ino: s.ino, size: s.size, mtimeMs: s.mtimeMs }, linked: s.nlink > 0 };
  }

  /** Appends `entries` as complete lines; resolves when written (and synced with `fsync`). */
  append(entries: TranscriptEntry[], options: AppendOptions): Promise<WrittenLines> {
    return inAppendOrder(this.path, async () => {
      let now = this.current();
      if (!now.linked) {
        // Closed first, so a failed open leaves no descriptor behind (NO_FILE), never a closed number.
        this.closeHeld();
        ({ fd: this.fd, size: this.size } = openForAppend(this.path));
        this.clean = false;
        now = this.current();
      }
      const before = now.file;
      const prefix =
        this.clean && before.size === this.size && before.size > 0
          ? ""
          : appendPrefix(this.fd, before.size, options.header);
      const lines = entries.map((entry) => JSON.stringify(entry));
      let text = prefix;
      for (const line of lines) text += `${line}\n`;
      try {
        // All or nothing: a write the disk cut short is taken back (appendAll).
        appendAll(this.fd, Buffer.from(text, "utf8"), before.size);
        if (options.fsync) await fsyncDescriptor(this.fd);
      } catch (error) {
        // The take-back may have failed and left a line cut short: the next append looks at the last byte again.
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
   * Runs `read` with the open descriptor (it may read, never write or close it, nor keep it past its promise)
   * between this process's appends to the file: none of ours lands while it reads, and the descriptor is not
   * closed before `read` settles. The descriptor may have been opened read/write.
   */
  whileHeld<T>(read: (file: ReadableFile) => Promise<T>): Promise<T> {
    return inAppendOrder(this.path, async () => {
      if (this.released) throw this.closedError();
      if (this.fd === NO_FILE) throw new Error(`the transcript writer of ${this.path} holds no open file`);
      return read({ fd: this.fd });
    });
  }

  /** Flushes what was written to disk (fsync, off the event loop). */
  sync(): Promise<void> {
    return inAppendOrder(this.path, async () => {
      if (!this.released && this.fd !== NO_FILE) await fsyncDescriptor(this.fd);
    });
  }

  /**
   * Flushes the file this writer holds (fsync through its descriptor, after the appends queued before it) and
   * resolves true; false, syncing nothing, when by then it holds none (closed, or an open of the path failed): the
   * caller syncs by path then. Saves a sync pass an open and a close per transcript; an append queued meanwhile
   * waits for the fsync (a few hundred microseconds, at most once a pass for a session).
   */
  syncHeld(): Promise<boolean> {
    return inAppendOrder(this.path, async () => {
      if (this.released || this.fd === NO_FILE) return false;
      await fsyncDescriptor(this.fd);
      return true;
    });
  }

  /**
   * Closes the descriptor once the appends, reads and syncs queued before it are done. Idempotent: the descriptor
   * is closed exactly once. The close is synchronous (`closeSync`, microseconds: a local file's close flushes
   * nothing), not one more threadpool trip behind other turns' fsyncs: once more sessions are in use than
   * transcripts may be held open (warm-limits.ts), almost every message that opens one closes another.
   */
  close(): Promise<void> {
    if (this.closed) return Promise.resolve();
    this.closed = true;
    return inAppendOrder(this.path, async () => {
      this.released = true;
      this.closeHeld();
    });
  }

  /** Closes the descriptor held, if any, and forgets its number. */
  private closeHeld(): void {
    const fd = this.fd;
    this.fd = NO_FILE;
    if (fd !== NO_FILE) closeSync(fd);
  }

  private closedError(): Error {
    return new Error(`the transcript writer of ${this.path} is closed`);
  }
}
