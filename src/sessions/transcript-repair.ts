import { randomBytes } from "node:crypto";
import { constants, copyFile, type FileHandle, open, rename, stat, unlink } from "node:fs/promises";
import { basename, dirname, join } from "node:path";
import { makeHeader } from "./transcript.js";
import { transcriptLines } from "./transcript-lines.js";
import { isBlankLine, parseFirstLine, parseTranscriptEntry } from "./transcript-parse.js";
import type { TranscriptHeader } from "./types.js";

/**
 * The one place that writes a transcript other than by appending: `clawdis doctor --fix`. The original is first
 * copied to `<file>.bak-<timestamp>`; the repaired copy (good lines byte for byte, bad and blank lines left out,
 * a header rebuilt when line 1 is not a good header for this file) is written to a temp file, synced, and
 * renamed over the original. If the file changed while this ran (a running gateway appended), the repair is
 * abandoned and the original left as it is.
 */

export interface RepairOptions {
  /** The file's session id (its name without `.jsonl`). */
  sessionId: string;
  /** For a rebuilt header: the key of the store entry or of the old header; unknown means no rebuild possible. */
  sessionKey?: string;
  /** Names the backup. */
  now: Date;
}

export type RepairResult =
  | { repaired: true; backup: string; removedLines: number; headerRebuilt: boolean }
  | { repaired: false; reason: string };

/** `2026-01-01T00-00-00-000Z`: an ISO time usable in a file name. */
export function fileStamp(now: Date): string {
  return now.toISOString().replace(/[:.]/g, "-");
}

/** `path.<kind>-<stamp>`, with `-2`, `-3`, … added when that name is taken. Never overwrites. */
export async function copyAside(path: string, kind: "bak" | "bad", now: Date): Promise<string> {
  const base = `${path}.${kind}-${fileStamp(now)}`;
  for (let n = 1; ; n++) {
    const target = n === 1 ? base : `${base}-${n}`;
    try {
      await copyFile(path, target, constants.COPYFILE_EXCL);
      return target;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== "EEXIST") throw error;
    }
  }
}

function validIso(ts: unknown): string | undefined {
  return typeof ts === "string" && Number.isFinite(Date.parse(ts)) ? new Date(ts).toISOString() : undefined;
}

/** Buffers lines and writes them to the temp file in batches of about 1 MiB. */
class BatchWriter {
  private batch: Buffer[] = [];
  private bytes = 0;
  constructor(private readonly handle: FileHandle) {}

  async line(bytes: Buffer): Promise<void> {
    this.batch.push(bytes, NEWLINE);
    this.bytes += bytes.length + 1;
    if (this.bytes >= 1 << 20) await this.flush();
  }

  async flush(): Promise<void> {
    if (this.batch.length === 0) return;
    await this.handle.write(Buffer.concat(this.batch));
    this.batch = [];
    this.bytes = 0;
  }
}

export async function repairTranscript(path: string, options: RepairOptions): Promise<RepairResult> {
  const before = await stat(path);
  const temp = join(
    dirname(path),
    `.${basename(path)}.repair-${process.pid}-${randomBytes(4).toString("hex")}`,
  );
  const handle = await open(temp, "wx", 0o600);
  let renamed = false;
  try {
    const out = new BatchWriter(handle);
    let removedLines = 0;
    let headerRebuilt = false;
    /** Once the header line is written; good lines seen before that wait in `pending` (only when rebuilding). */
    let headerWritten = false;
    let pending: Buffer[] = [];
    let oldKey: string | undefined;
    let oldHeader: TranscriptHeader | undefined;

    const writeRebuiltHeader = async (firstTs: string | undefined): Promise<boolean> => {
      const key = options.sessionKey ?? oldKey;
      if (key === undefined) return false;
      const header = oldHeader
        ? { ...oldHeader, id: options.sessionId }
        : makeHeader(options.sessionId, key, new Date(firstTs ?? before.mtime.toISOString()));
      await out.line(Buffer.from(JSON.stringify(header)));
      for (const line of pending) await out.line(line);
      pending = [];
      headerWritten = true;
      return true;
    };

    for await (const raw of transcriptLines(path)) {
      const text = raw.bytes.toString("utf8");
      if (isBlankLine(text)) {
        removedLines += 1;
        continue;
      }
      if (raw.line === 1) {
        const first = parseFirstLine(text);
        if (first.kind === "header" && first.header.id === options.sessionId) {
          await out.line(raw.bytes);
          headerWritten = true;
          continue;
        }
        headerRebuilt = true;
        if (first.kind === "header") {
          // A good header naming another id: keep its fields, correct the id.
          oldHeader = first.header;
          oldKey = first.header.sessionKey;
          if (!(await writeRebuiltHeader(undefined))) return noKey();
        } else if (first.kind === "entry") {
          pending.push(raw.bytes);
          if (!(await writeRebuiltHeader(validIso(first.entry.ts)))) return noKey();
        } else {
          removedLines += 1;
        }
        continue;
      }
      const entry = parseTranscriptEntry(text);
      if (!entry.ok) {
        removedLines += 1;
        continue;
      }
      if (headerWritten) {
        await out.line(raw.bytes);
      } else {
        // Line 1 was bad: the first good entry dates the rebuilt header.
        pending.push(raw.bytes);
        if (!(await writeRebuiltHeader(validIso(entry.value.ts)))) return noKey();
      }
    }
    if (!headerWritten) {
      headerRebuilt = true;
      if (!(await writeRebuiltHeader(undefined))) return noKey();
    }
    if (!headerRebuilt && removedLines === 0) return { repaired: false, reason: "nothing to repair" };

    await out.flush();
    await handle.sync();
    await handle.close();
    const backup = await copyAside(path, "bak", options.now);
    const after = await stat(path);
    if (after.size !== before.size || after.mtimeMs !== before.mtimeMs) {
      await unlink(backup).catch(() => {});
      return {
        repaired: false,
        reason: "the file changed while it was being repaired (is the gateway writing to it?)",
      };
    }
    await rename(temp, path);
    renamed = true;
    return { repaired: true, backup, removedLines, headerRebuilt };
  } finally {
    if (!renamed) {
      await handle.close().catch(() => {});
      await unlink(temp).catch(() => {});
    }
  }
}

function noKey(): RepairResult {
  return { repaired: false, reason: "line 1 is no header and no session key is known to rebuild it from" };
}

const NEWLINE = Buffer.from("\n");
