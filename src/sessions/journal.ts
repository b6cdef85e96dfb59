import { randomUUID } from "node:crypto";
import { type FileHandle, mkdir, open, readFile, rename, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { describeError } from "../core/errors.js";
import type { Logger } from "../core/logger.js";
import type { InboundMessage } from "../plugin-api/types.js";

/**
 * The durable inbound journal: `<state>/journal/inbound.jsonl`.
 *
 * Contract:
 * - `accept` is fsync'd before it resolves; only then is the transport told the message was received.
 * - Every accepted record ends as exactly one of `replied`, `failed-told`, `filtered` (with a reason).
 * - How far a record got is read from the transcript (its entries carry the record's id in `meta.journalId`) and
 *   from `delivered` records (reply part N of a split reply reached the chat): a restart resumes from there and
 *   never stores the message, calls the model or sends a part twice.
 * - Writes are group-committed: records queued while an fsync runs are written and fsync'd together.
 * - `(channel, messageId)` of the newest `dedupeLimit` messages is remembered, across restarts, for dedupe.
 * The file is rewritten (temp + rename) only to drop finished records, keeping open ones and the dedupe keys.
 */

export type JournalOutcome = "replied" | "failed-told" | "filtered";

type JournalRecord =
  | { op: "accept"; jid: string; at: number; msg: InboundMessage }
  | { op: "delivered"; jid: string; at: number; part: number }
  | { op: "end"; jid: string; at: number; outcome: JournalOutcome; reason?: string }
  | { op: "seen"; keys: string[] };

/** An accepted message that has not ended, as found on start. */
export interface OpenRecord {
  jid: string;
  message: InboundMessage;
  acceptedAt: number;
  /** Reply parts already delivered. */
  delivered: number[];
}

export function dedupeKey(message: Pick<InboundMessage, "channel" | "messageId">): string {
  return `${message.channel}\u0000${message.messageId}`;
}

export class Journal {
  private readonly path: string;
  private handle: FileHandle | undefined;
  private readonly open = new Map<string, OpenRecord>();
  private readonly seen: string[] = [];
  private readonly seenSet = new Set<string>();
  private pending: { line: string; resolve: () => void; reject: (error: unknown) => void }[] = [];
  private flushing: Promise<void> | undefined;
  private recordsSinceCompact = 0;

  constructor(
    private readonly options: { dir: string; logger: Logger; dedupeLimit?: number; compactEvery?: number },
  ) {
    this.path = join(options.dir, "inbound.jsonl");
  }

  /** Reads the journal and returns the records left open by the previous run (oldest first). */
  async openJournal(): Promise<OpenRecord[]> {
    await mkdir(this.options.dir, { recursive: true });
    let text = "";
    try {
      text = await readFile(this.path, "utf8");
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== "ENOENT") throw error;
    }
    let bad = 0;
    for (const line of text.split("\n")) {
      if (line.trim().length === 0) continue;
      let record: JournalRecord;
      try {
        record = JSON.parse(line) as JournalRecord;
      } catch {
        bad++;
        continue;
      }
      this.apply(record);
    }
    if (bad > 0)
      this.options.logger.warn("journal: skipped lines that do not parse", { path: this.path, lines: bad });
    await this.compact();
    this.handle = await open(this.path, "a");
    return [...this.open.values()];
  }

  /** Whether this message was already accepted (now or in an earlier run). */
  isDuplicate(message: Pick<InboundMessage, "channel" | "messageId">): boolean {
    return this.seenSet.has(dedupeKey(message));
  }

  /** Durably records an accepted message; resolves after fsync. */
  async accept(message: InboundMessage, now: number): Promise<string> {
    const jid = randomUUID();
    await this.write({ op: "accept", jid, at: now, msg: message });
    return jid;
  }

  async markDelivered(jid: string, part: number, now: number): Promise<void> {
    await this.write({ op: "delivered", jid, at: now, part });
  }

  async end(jid: string, outcome: JournalOutcome, now: number, reason?: string): Promise<void> {
    await this.write({ op: "end", jid, at: now, outcome, ...(reason ? { reason } : {}) });
  }

  get(jid: string): OpenRecord | undefined {
    return this.open.get(jid);
  }

  openCount(): number {
    return this.open.size;
  }

  async close(): Promise<void> {
    await this.flushing;
    await this.handle?.close();
    this.handle = undefined;
  }

  private apply(record: JournalRecord): void {
    switch (record.op) {
      case "accept": {
        this.remember(dedupeKey(record.msg));
        this.open.set(record.jid, {
          jid: record.jid,
          message: record.msg,
          acceptedAt: record.at,
          delivered: [],
        });
        break;
      }
      case "delivered": {
        this.open.get(record.jid)?.delivered.push(record.part);
        break;
      }
      case "end":
        this.open.delete(record.jid);
        break;
      case "seen":
        for (const key of record.keys) this.remember(key);
        break;
    }
  }

  private remember(key: string): void {
    if (this.seenSet.has(key)) return;
    this.seenSet.add(key);
    this.seen.push(key);
    const limit = this.options.dedupeLimit ?? 10_000;
    while (this.seen.length > limit) this.seenSet.delete(this.seen.shift()!);
  }

  /** Applies the record now; resolves once it is on disk (written and fsync'd with whatever else was queued). */
  private write(record: JournalRecord): Promise<void> {
    this.apply(record);
    const line = `${JSON.stringify(record)}\n`;
    return new Promise((resolve, reject) => {
      this.pending.push({ line, resolve, reject });
      this.flushing ??= this.flush().finally(() => {
        this.flushing = undefined;
      });
    });
  }

  private async flush(): Promise<void> {
    while (this.pending.length > 0) {
      const batch = this.pending.splice(0);
      try {
        const handle = this.handle;
        if (!handle) throw new Error("journal is not open");
        await handle.write(batch.map((b) => b.line).join(""));
        await handle.datasync();
        this.recordsSinceCompact += batch.length;
        if (this.recordsSinceCompact >= (this.options.compactEvery ?? 5_000)) {
          this.handle = undefined;
          await handle.close();
          await this.compact();
          this.handle = await open(this.path, "a");
        }
        for (const b of batch) b.resolve();
      } catch (error) {
        this.options.logger.error("journal write failed", { error: describeError(error) });
        for (const b of batch) b.reject(error);
      }
    }
  }

  /** Rewrites the file with only what is still needed: the dedupe keys and the open records. */
  private async compact(): Promise<void> {
    const lines: string[] = [JSON.stringify({ op: "seen", keys: this.seen } satisfies JournalRecord)];
    for (const open of this.open.values()) {
      lines.push(JSON.stringify({ op: "accept", jid: open.jid, at: open.acceptedAt, msg: open.message }));
      for (const part of open.delivered)
        lines.push(JSON.stringify({ op: "delivered", jid: open.jid, at: open.acceptedAt, part }));
    }
    const tmp = `${this.path}.tmp-${process.pid}`;
    await writeFile(tmp, `${lines.join("\n")}\n`, { mode: 0o600 });
    const handle = await open(tmp, "r+");
    try {
      await handle.sync();
    } finally {
      await handle.close();
    }
    await rename(tmp, this.path);
    this.recordsSinceCompact = 0;
  }
}
