import { appendFile, mkdir, open, readFile, rename, writeFile } from "node:fs/promises";
import { dirname } from "node:path";

/**
 * A background job's output log, `jobs/<id>.log` in its session folder, bounded (docs/tools.md, Background jobs):
 * past `limitBytes` of output the oldest bytes are dropped, so that the newest half of the limit stays, and the
 * log's first line says how many bytes were dropped in all. `trimPlan` decides (pure); `JobLog` writes.
 */

/** The log's first line once bytes were dropped. Pure. */
export function droppedLine(dropped: number, limitBytes: number): string {
  return `[clawdis: the first ${dropped} bytes of output were dropped; this log keeps at most the last ${limitBytes} bytes]\n`;
}

/**
 * What to do after the output kept grew to `keptBytes`: nothing while within `limitBytes`; past it, drop the
 * oldest `drop` bytes so that `keep` (half the limit, rounded down) remain. Pure.
 */
export function trimPlan(keptBytes: number, limitBytes: number): { drop: number; keep: number } | undefined {
  if (keptBytes <= limitBytes) return undefined;
  const keep = Math.floor(limitBytes / 2);
  return { drop: keptBytes - keep, keep };
}

/** The default bound of one job's log: 1 MiB. */
export const JOB_LOG_LIMIT_BYTES = 1024 * 1024;

/**
 * Appends output to the log in the order given (each write waits for the one before); `settled()` resolves once
 * all are written; `backlog()` says how much waits (the job process pauses its pipes past a bound). Write errors are kept out of the job's way: the first one is remembered in `error`.
 */
export class JobLog {
  private kept = 0;
  private dropped = 0;
  /** Bytes handed to `write` and not written yet. */
  private pending = 0;
  private chain: Promise<void>;
  error: unknown;

  constructor(
    readonly path: string,
    private readonly limitBytes: number = JOB_LOG_LIMIT_BYTES,
  ) {
    this.chain = mkdir(dirname(path), { recursive: true, mode: 0o700 })
      .then(() => writeFile(path, "", { mode: 0o600 }))
      .catch((error: unknown) => {
        this.error ??= error;
      });
  }

  write(chunk: Buffer | string): void {
    const bytes = typeof chunk === "string" ? Buffer.from(chunk) : chunk;
    this.pending += bytes.length;
    this.chain = this.chain
      .then(() => this.append(bytes))
      .catch((error: unknown) => {
        this.error ??= error;
      })
      .finally(() => {
        this.pending -= bytes.length;
      });
  }

  /** Bytes given to `write` that are not on disk yet: the job's output is paused while this is high. */
  backlog(): number {
    return this.pending;
  }

  settled(): Promise<void> {
    return this.chain;
  }

  private async append(bytes: Buffer): Promise<void> {
    await appendFile(this.path, bytes);
    this.kept += bytes.length;
    const plan = trimPlan(this.kept, this.limitBytes);
    if (!plan) return;
    const whole = await readFile(this.path);
    const body = whole.subarray(whole.length - plan.keep);
    this.dropped += plan.drop;
    const temp = `${this.path}.tmp`;
    await writeFile(temp, Buffer.concat([Buffer.from(droppedLine(this.dropped, this.limitBytes)), body]), {
      mode: 0o600,
    });
    await rename(temp, this.path);
    this.kept = plan.keep;
  }
}

/** A log's last `maxBytes` bytes as text ("" when it cannot be read). */
export async function readLogTail(path: string, maxBytes: number): Promise<string> {
  return readLogRange(path, undefined, maxBytes);
}

/**
 * `length` bytes of a log from byte `offset`; `offset` undefined: its last `length` bytes. "" when the log cannot
 * be read.
 */
export async function readLogRange(
  path: string,
  offset: number | undefined,
  length: number,
): Promise<string> {
  let handle: Awaited<ReturnType<typeof open>> | undefined;
  try {
    handle = await open(path, "r");
    const size = (await handle.stat()).size;
    const start = offset === undefined ? Math.max(0, size - length) : Math.min(offset, size);
    const wanted = Math.max(0, Math.min(length, size - start));
    const buffer = Buffer.alloc(wanted);
    const { bytesRead } = await handle.read(buffer, 0, wanted, start);
    return buffer.subarray(0, bytesRead).toString("utf8");
  } catch {
    return "";
  } finally {
    await handle?.close();
  }
}
