import { randomUUID } from "node:crypto";
import { statSync, writeSync } from "node:fs";
import { type FileHandle, mkdir, open, rename } from "node:fs/promises";
import { join } from "node:path";
import { ClawdisError, describeError } from "../core/errors.js";
import type { Logger } from "../core/logger.js";
import type { InboundMessage } from "../plugin-api/types.js";
import { fromJournalMessage, type JournalMessageV2, toJournalMessage } from "./journal-record.js";
import type { TranscriptEntry } from "./types.js";

/**
 * The durable inbound journal: `<state>/journal/inbound.jsonl`.
 *
 * Contract:
 * - `accept` is fsync'd before it resolves; only then is the transport told the message was received.
 *   `acceptWritten` resolves as soon as the record is written (a crash of the process keeps it; a power cut may
 *   not), with `durable` for the fsync: the caller may start work meanwhile, but tells the transport, answers or
 *   acts only once `durable` resolved (see gateway.ts receive).
 * - Every accepted record ends as exactly one of `replied`, `failed-told`, `filtered` (with a reason).
 * - How far a record got is read from the transcript (its entries carry the record's id in `meta.journalId`) and
 *   from `delivered` records (reply part N of a split reply reached the chat): a restart resumes from there and
 *   never stores the message, calls the model or sends a part twice.
 * - Writes are group-committed: records queued while an fsync runs are written and fsync'd together. A batch's
 *   fsync starts after the work its `written` callbacks set off in the same turn of the event loop.
 * - `(channel, messageId)` of the newest `dedupeLimit` messages is remembered, across restarts, for dedupe. A
 *   record counts (as seen, as open, as ended) only once it is on disk: a failed write leaves no trace, so the
 *   retry of a message whose accept failed is accepted, not refused as a duplicate.
 * - The file is read line by line (no size limit on the file), one record is at most MAX_RECORD_BYTES, and the
 *   open records together at most MAX_OPEN_BYTES (then `accept` refuses with MESSAGE_TOO_LARGE / STATE_BUSY).
 * - The file is rewritten (temp + fsync + rename + directory fsync) to drop finished records, keeping open ones
 *   and the dedupe keys: at open (unless `readOnly`), and after `compactEvery` records or `compactBytes` bytes.
 * - Only the process that owns the state directory (runtime/state-lock.ts) opens the journal for writing.
 * - A turn's reply is on disk before it is sent: `reply` holds the turn's transcript entries (the person's
 *   message, tool calls and results, the final answer), written to the transcript without fsync and made durable
 *   here, in the group commit with other turns' records, instead of by one fsync of each transcript. The caller
 *   syncs the transcripts behind its `reply` records (`syncTranscripts`, within about a second) and notes each
 *   pass with `markSynced`. A `reply` record with no `synced` after it that covers it is unsynced: at open, before the
 *   file is compacted, `repair` is given those records (the transcript lines a power cut may have taken are put
 *   back from them); compaction, which drops them, first calls `syncTranscripts`; `close` does too, then marks.
 *   A process that could not repair what it found claims nothing: it writes no `synced` and does not compact.
 */

/** Resolves in the event loop's check phase: after the I/O callbacks, microtasks and ticks queued so far. */
function afterThisTurn(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve));
}

/** How often an end that could not be written is tried again. */
const END_RETRY_MS = 1000;

/** The largest record one message may put in the journal (its text and metadata, as JSON). */
export const MAX_RECORD_BYTES = 2 * 1024 * 1024;
/** Open (not yet answered) records may hold at most this much; beyond it new messages are refused for now. */
export const MAX_OPEN_BYTES = 256 * 1024 * 1024;

export type JournalOutcome = "replied" | "failed-told" | "filtered";

export type JournalRecord =
  /** `msg`: a JournalMessageV2 (journal-record.ts), or a version 1 record (the InboundMessage itself). */
  | { op: "accept"; jid: string; at: number; msg: JournalMessageV2 | InboundMessage }
  | { op: "delivered"; jid: string; at: number; part: number }
  | { op: "end"; jid: string; at: number; outcome: JournalOutcome; reason?: string }
  | { op: "seen"; keys: string[] }
  /**
   * A turn's transcript entries (see the contract above); `id` names the record for `synced`. `ends`: records
   * this one ends `replied` as it reaches the disk (a reply to the local API, whose answer follows it at once).
   */
  | ({ op: "reply"; at: number; ends?: ReplyEnd[] } & UnsyncedReply)
  /** Every transcript line behind the `reply` records up to and including `upTo` is on disk. */
  | { op: "synced"; at: number; upTo: string };

/** A record a `reply` record ends `replied` (with the reason an `end` would have). */
export interface ReplyEnd {
  jid: string;
  reason?: string;
}

/** A `reply` record not known to be in its transcript on disk: what `repair` is given at open. */
export interface UnsyncedReply {
  id: string;
  sessionId: string;
  sessionKey: string;
  /** In the order they were appended to the transcript. */
  entries: TranscriptEntry[];
}

/** An accepted message that has not ended, as found on start. */
export interface OpenRecord {
  jid: string;
  message: InboundMessage;
  /** From the gateway's own API; undefined for a record written before version 2 (the caller decides). */
  local?: boolean;
  acceptedAt: number;
  /** Reply parts already delivered. */
  delivered: number[];
  /** Bytes of its accept line. */
  bytes: number;
}

export interface JournalOptions {
  dir: string;
  logger: Logger;
  dedupeLimit?: number;
  compactEvery?: number;
  compactBytes?: number;
  maxOpenBytes?: number;
  /**
   * Makes the transcript lines behind every `reply` record written so far durable (fsync); called before a
   * compaction drops `reply` records and at `close`. Absent: nothing to sync (the caller writes no `reply` records).
   */
  syncTranscripts?: () => Promise<void>;
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
  /** Dedupe keys of accepts being written: duplicates already, forgotten again if the write fails. */
  private readonly inflight = new Set<string>();
  private openBytes = 0;
  private pending: {
    line: string;
    record: JournalRecord;
    resolve: () => void;
    reject: (error: unknown) => void;
    /** Called once the line is written, before the fsync. */
    written?: () => void;
    /** Already written to the file by `writeAtOnce`: the flush only fsyncs and applies it. */
    preWritten?: boolean;
  }[] = [];
  /** The batch the flush is writing now (taken out of `pending`). */
  private batch: Journal["pending"] = [];
  /** While a compaction runs: nothing is written at once (it would go to the file being replaced). */
  private compacting = false;
  private flushing: Promise<void> | undefined;
  private recordsSinceCompact = 0;
  private bytesSinceCompact = 0;
  private closing = false;
  /** After `close`: every write fails (nothing reopens the file behind the owner's back). */
  private closed = false;
  /** Device and inode of the file this process appends to (checked before each write). */
  private identity: { dev: number; ino: number } | undefined;
  /** While the file is read at open: the `reply` records no `synced` covers yet, in file order. */
  private unsynced: UnsyncedReply[] | undefined;
  /** The newest `reply` record written to the file by this process (what a `synced` may claim). */
  private lastReply: string | undefined;
  /** Unsynced replies found at open that could not be repaired yet; until they are: no `synced`, no compaction. */
  private unrepaired: UnsyncedReply[] = [];
  private repair: ((replies: UnsyncedReply[]) => Promise<void>) | undefined;

  constructor(private readonly options: JournalOptions) {
    this.path = join(options.dir, "inbound.jsonl");
  }

  get filePath(): string {
    return this.path;
  }

  /**
   * Reads the journal (streaming, line by line) and returns the records left open by the previous run (oldest
   * first). Compacts the file first unless `readOnly` (a one-shot `clawdis agent` run leaves the file as it is).
   */
  async openJournal(
    options: { compact?: boolean; repair?: (replies: UnsyncedReply[]) => Promise<void> } = {},
  ): Promise<OpenRecord[]> {
    await mkdir(this.options.dir, { recursive: true, mode: 0o700 });
    this.unsynced = [];
    const { bad } = await readRecords(this.path, (record, bytes) => this.apply(record, bytes));
    this.unrepaired = this.unsynced;
    this.unsynced = undefined;
    this.repair = options.repair;
    if (bad > 0)
      this.options.logger.warn("journal: skipped lines that do not parse", { path: this.path, lines: bad });
    if (options.compact !== false && (await this.repairNow())) await this.compact();
    await this.reopen();
    return [...this.open.values()];
  }

  /** Repairs what `openJournal` found unsynced; false (logged) while that cannot be done. */
  private async repairNow(): Promise<boolean> {
    if (this.unrepaired.length === 0) return true;
    if (!this.repair) return false;
    try {
      await this.repair(this.unrepaired);
    } catch (error) {
      this.options.logger.error(
        "could not check the transcripts behind the journal's replies; the journal keeps them and is not compacted",
        { replies: this.unrepaired.length, error: describeError(error) },
      );
      return false;
    }
    this.unrepaired = [];
    return true;
  }

  /**
   * Durably records a turn's transcript entries (already appended to its transcript without fsync): the reply
   * among them may be sent once this resolves; `ends` end `replied` with it, as one record. False, with nothing
   * written, when the record would be over MAX_RECORD_BYTES: the caller then syncs the transcript itself (and
   * ends the records itself).
   */
  async reply(
    sessionId: string,
    sessionKey: string,
    entries: TranscriptEntry[],
    now: number,
    ends: ReplyEnd[] = [],
  ): Promise<boolean> {
    const record: JournalRecord = {
      op: "reply",
      id: randomUUID(),
      at: now,
      sessionId,
      sessionKey,
      entries,
      ...(ends.length > 0 ? { ends } : {}),
    };
    const line = `${JSON.stringify(record)}\n`;
    if (Buffer.byteLength(line) > MAX_RECORD_BYTES) return false;
    await this.write(record, line);
    return true;
  }

  /** The newest `reply` record in the file: sync the transcripts, then `markSynced` it. */
  lastReplyWritten(): string | undefined {
    return this.lastReply;
  }

  /**
   * Notes that every transcript line behind the `reply` records up to `upTo` is on disk. Never throws (a mark
   * that is not written only leaves more to check at the next open). Nothing is written while replies found at
   * open are not repaired.
   */
  async markSynced(upTo: string, now: number): Promise<void> {
    if (this.unrepaired.length > 0 || this.closed) return;
    const record: JournalRecord = { op: "synced", at: now, upTo };
    await this.write(record, `${JSON.stringify(record)}\n`).catch(() => {});
  }

  /** Resolves once every record queued so far is written and fsync'd (or failed). */
  async settled(): Promise<void> {
    while (this.flushing) await this.flushing;
  }

  /** Whether this message was already accepted (now, being written, or in an earlier run). */
  isDuplicate(message: Pick<InboundMessage, "channel" | "messageId">): boolean {
    const key = dedupeKey(message);
    return this.seenSet.has(key) || this.inflight.has(key);
  }

  /**
   * Durably records an accepted message; resolves after fsync. Refuses (MESSAGE_TOO_LARGE, STATE_BUSY) a
   * message over MAX_RECORD_BYTES or one that would take the open records over the limit; nothing is recorded.
   */
  async accept(
    message: InboundMessage,
    now: number,
    origin: { local: boolean } = { local: false },
  ): Promise<string> {
    const { jid, durable } = await this.acceptWritten(message, now, origin);
    await durable;
    return jid;
  }

  /**
   * `accept` in two steps: resolves once the record is written (refusals and a failed write reject, as `accept`),
   * with `durable`, which resolves once it is fsync'd and rejects if that fails (then nothing is recorded, as for
   * a failed `accept`). Until `durable` settles the message counts as a duplicate of itself (`isDuplicate`).
   */
  async acceptWritten(
    message: InboundMessage,
    now: number,
    origin: { local: boolean } = { local: false },
  ): Promise<{ jid: string; durable: Promise<void> }> {
    const jid = randomUUID();
    const record: JournalRecord = { op: "accept", jid, at: now, msg: toJournalMessage(message, origin) };
    const line = `${JSON.stringify(record)}\n`;
    const bytes = Buffer.byteLength(line);
    if (bytes > MAX_RECORD_BYTES) {
      throw new ClawdisError(
        "MESSAGE_TOO_LARGE",
        `message of ${bytes} bytes refused: at most ${MAX_RECORD_BYTES} bytes per message`,
      );
    }
    if (this.openBytes + bytes > (this.options.maxOpenBytes ?? MAX_OPEN_BYTES)) {
      throw new ClawdisError(
        "STATE_BUSY",
        `too many unanswered messages (${this.open.size}, ${this.openBytes} bytes) wait in the journal; retry later`,
      );
    }
    const key = dedupeKey(message);
    this.inflight.add(key);
    return new Promise((resolve, reject) => {
      const durable = this.write(record, line, () => resolve({ jid, durable }));
      void durable.then(
        () => this.inflight.delete(key),
        (error: unknown) => {
          this.inflight.delete(key);
          // A failed write: `written` was never called.
          reject(error);
        },
      );
    });
  }

  async markDelivered(jid: string, part: number, now: number): Promise<void> {
    const record: JournalRecord = { op: "delivered", jid, at: now, part };
    await this.write(record, `${JSON.stringify(record)}\n`);
  }

  /**
   * Ends a record. Never throws: an end that cannot be written (a full disk) is kept and written again every
   * second until it is (and at `close`); until then the record counts as open, and a crash meanwhile replays it
   * (the transcript tells the replay how far it got).
   */
  async end(jid: string, outcome: JournalOutcome, now: number, reason?: string): Promise<void> {
    const record: JournalRecord = { op: "end", jid, at: now, outcome, ...(reason ? { reason } : {}) };
    const line = `${JSON.stringify(record)}\n`;
    try {
      await this.write(record, line);
    } catch (error) {
      this.options.logger.warn("could not end a journal record; trying again", {
        jid,
        error: describeError(error),
      });
      this.unwrittenEnds.push({ record, line });
      this.scheduleEndRetry();
    }
  }

  /** Ends that could not be written yet, oldest first. */
  private readonly unwrittenEnds: { record: JournalRecord; line: string }[] = [];
  private endRetry: NodeJS.Timeout | undefined;

  private scheduleEndRetry(): void {
    if (this.endRetry || this.closing) return;
    this.endRetry = setTimeout(() => {
      this.endRetry = undefined;
      void this.writeUnwrittenEnds();
    }, END_RETRY_MS);
    this.endRetry.unref();
  }

  private async writeUnwrittenEnds(): Promise<void> {
    while (this.unwrittenEnds.length > 0) {
      const next = this.unwrittenEnds[0]!;
      try {
        await this.write(next.record, next.line);
      } catch {
        this.scheduleEndRetry();
        return;
      }
      this.unwrittenEnds.shift();
    }
  }

  get(jid: string): OpenRecord | undefined {
    return this.open.get(jid);
  }

  openCount(): number {
    return this.open.size;
  }

  /** Bytes the open records take (what the journal holds that is not answered yet). */
  openByteCount(): number {
    return this.openBytes;
  }

  async close(): Promise<void> {
    // A last try for ends that could not be written; what still fails stays open for the next start.
    this.closing = true;
    clearTimeout(this.endRetry);
    await this.writeUnwrittenEnds().catch(() => {});
    const upTo = this.lastReply;
    if (upTo && this.handle) {
      try {
        await this.options.syncTranscripts?.();
        await this.markSynced(upTo, Date.now());
      } catch (error) {
        // The next open checks the transcripts behind these replies instead.
        this.options.logger.warn("could not sync the transcripts at close", { error: describeError(error) });
      }
    }
    this.closed = true;
    await this.flushing;
    await this.handle?.close();
    this.handle = undefined;
  }

  private apply(record: JournalRecord, bytes: number): void {
    switch (record.op) {
      case "accept": {
        const { message, local } = fromJournalMessage(record.msg);
        this.remember(dedupeKey(message));
        if (this.open.has(record.jid)) break;
        this.open.set(record.jid, {
          jid: record.jid,
          message,
          ...(local !== undefined ? { local } : {}),
          acceptedAt: record.at,
          delivered: [],
          bytes,
        });
        this.openBytes += bytes;
        break;
      }
      case "delivered": {
        this.open.get(record.jid)?.delivered.push(record.part);
        break;
      }
      case "end":
        this.ended(record.jid);
        break;
      case "seen":
        for (const key of record.keys) this.remember(key);
        break;
      case "reply":
        for (const end of record.ends ?? []) this.ended(end.jid);
        this.unsynced?.push({
          id: record.id,
          sessionId: record.sessionId,
          sessionKey: record.sessionKey,
          entries: record.entries,
        });
        break;
      case "synced": {
        const at = this.unsynced?.findIndex((r) => r.id === record.upTo) ?? -1;
        // Not found: it was compacted away with every reply before it; the ones left came after it.
        if (at !== -1) this.unsynced?.splice(0, at + 1);
        break;
      }
    }
  }

  private ended(jid: string): void {
    const open = this.open.get(jid);
    if (open) this.openBytes -= open.bytes;
    this.open.delete(jid);
  }

  private remember(key: string): void {
    if (this.seenSet.has(key)) return;
    this.seenSet.add(key);
    this.seen.push(key);
    const limit = this.options.dedupeLimit ?? 10_000;
    while (this.seen.length > limit) this.seenSet.delete(this.seen.shift()!);
  }

  /**
   * Resolves once the record is on disk (written and fsync'd with whatever else was queued); applied only then.
   * A `delivered` or `end` record (a reply reached its chat) is written to the file at once, also while an fsync
   * of earlier records runs, so a crash right after the send finds it (a kill keeps what was written; only a
   * power cut needs the fsync): the window in which a crash sends a part again is as short as one write. It is
   * fsync'd and applied with the next batch.
   */
  private write(record: JournalRecord, line: string, written?: () => void): Promise<void> {
    return new Promise((resolve, reject) => {
      const preWritten =
        this.flushing !== undefined &&
        (record.op === "delivered" || record.op === "end") &&
        this.writeAtOnce(line);
      this.pending.push({
        line,
        record,
        resolve,
        reject,
        ...(written ? { written } : {}),
        ...(preWritten ? { preWritten } : {}),
      });
      this.flushing ??= this.flush().finally(() => {
        this.flushing = undefined;
      });
    });
  }

  /** Appends `line` now, outside the group commit; false (nothing or a failed write) if it cannot be. */
  private writeAtOnce(line: string): boolean {
    if (!this.handle || this.closed || this.compacting) return false;
    try {
      writeAll(this.handle.fd, Buffer.from(line, "utf8"));
      return true;
    } catch {
      return false;
    }
  }

  private async flush(): Promise<void> {
    while (this.pending.length > 0) {
      const batch = this.pending.splice(0);
      this.batch = batch;
      const text = batch.map((b) => b.line).join("");
      try {
        const handle = await this.writableHandle();
        // The write is a synchronous page-cache copy (an async one costs more CPU than the copy); the datasync
        // waits off the event loop. Lines written at once are not written again (unless a compaction dropped
        // them: it clears `preWritten`).
        const unwritten = batch.some((b) => b.preWritten)
          ? batch
              .filter((b) => !b.preWritten)
              .map((b) => b.line)
              .join("")
          : text;
        if (unwritten.length > 0) writeAll(handle.fd, Buffer.from(unwritten, "utf8"));
        for (const b of batch) if (b.record.op === "reply") this.lastReply = b.record.id;
        for (const b of batch) b.written?.();
        // The datasync starts once what this turn of the event loop set off has run: the turn that took the
        // message goes on to its model request first (`acceptWritten`), so on a machine with few cores the
        // fsync's kernel work does not hold the request back (p50 hand-in -> model request 0.77-0.85 -> 0.67-0.75
        // ms on two cores, docs/runtime.md step 4). Nothing waits for it that did not before: every ack still does.
        await afterThisTurn();
        await handle.datasync();
      } catch (error) {
        this.options.logger.error("journal write failed", { error: describeError(error) });
        for (const b of batch) b.reject(error);
        continue;
      }
      for (const b of batch) this.apply(b.record, Buffer.byteLength(b.line));
      this.recordsSinceCompact += batch.length;
      this.bytesSinceCompact += Buffer.byteLength(text);
      for (const b of batch) b.resolve();
      if (
        this.recordsSinceCompact >= (this.options.compactEvery ?? 5_000) ||
        this.bytesSinceCompact >= (this.options.compactBytes ?? 64 * 1024 * 1024)
      ) {
        await this.compactInPlace().catch((error: unknown) => {
          // The records are safe in the old file, which stays in use; compaction is tried again later.
          this.options.logger.error("journal compaction failed", { error: describeError(error) });
        });
      }
    }
  }

  /**
   * The handle to append to: reopened when a failed compaction left none, and checked to still be the file at
   * `path` (if something replaced or removed it, this process's state is written out afresh first, so nothing it
   * accepted is lost with an unlinked file).
   */
  private async writableHandle(): Promise<FileHandle> {
    if (this.closed) throw new Error(`the journal ${this.path} is closed`);
    if (!this.handle) await this.reopen();
    let current: { ino: number; dev: number } | undefined;
    try {
      // Synchronous: one lookup of a cached path, cheaper than a trip through the threadpool.
      current = statSync(this.path, { throwIfNoEntry: false });
    } catch {
      current = undefined;
    }
    if (!current || current.ino !== this.identity?.ino || current.dev !== this.identity?.dev) {
      this.options.logger.error(
        "journal file was replaced or removed by something else; writing this process's records to a new one",
        { path: this.path },
      );
      await this.compactInPlace({ replaced: true });
    }
    return this.handle!;
  }

  /**
   * Rewrites the file in place. The `reply` records are dropped, so what they stand for must be in the transcripts
   * on disk first; when the file was `replaced` by something else they are gone already, and this process's state
   * is written out whatever the transcripts' state.
   */
  private async compactInPlace(options: { replaced?: boolean } = {}): Promise<void> {
    // Lines written at once but not applied yet are not in the rewritten file: they are written again after it.
    this.compacting = true;
    for (const b of [...this.pending, ...this.batch]) b.preWritten = false;
    try {
      await this.compactInPlaceNow(options);
    } finally {
      this.compacting = false;
    }
  }

  private async compactInPlaceNow(options: { replaced?: boolean }): Promise<void> {
    if (!options.replaced) {
      if (!(await this.repairNow())) throw new Error("replies found at open are not repaired yet");
      await this.options.syncTranscripts?.();
    } else {
      await this.options.syncTranscripts?.().catch(() => {});
    }
    const old = this.handle;
    this.handle = undefined;
    await old?.close().catch(() => {});
    try {
      await this.compact();
    } finally {
      await this.reopen();
    }
  }

  private async reopen(): Promise<void> {
    const handle = await open(this.path, "a", 0o600);
    const info = await handle.stat();
    this.handle = handle;
    this.identity = { dev: info.dev, ino: info.ino };
  }

  /** Rewrites the file with only what is still needed: the dedupe keys and the open records. */
  private async compact(): Promise<void> {
    const lines: string[] = [JSON.stringify({ op: "seen", keys: this.seen } satisfies JournalRecord)];
    for (const open of this.open.values()) {
      const msg =
        open.local === undefined ? open.message : toJournalMessage(open.message, { local: open.local });
      lines.push(JSON.stringify({ op: "accept", jid: open.jid, at: open.acceptedAt, msg }));
      for (const part of open.delivered)
        lines.push(JSON.stringify({ op: "delivered", jid: open.jid, at: open.acceptedAt, part }));
    }
    const tmp = `${this.path}.tmp-${process.pid}`;
    const handle = await open(tmp, "w", 0o600);
    try {
      // Line by line: the open records may be large together, one string of all of them need not fit.
      for (const line of lines) await handle.write(`${line}\n`);
      await handle.sync();
    } finally {
      await handle.close();
    }
    await rename(tmp, this.path);
    await syncDir(this.options.dir);
    this.recordsSinceCompact = 0;
    this.bytesSinceCompact = 0;
  }
}

/**
 * Calls `onRecord` for each line that parses, streaming; returns how many did not. A missing file is empty.
 * A line longer than twice MAX_RECORD_BYTES (garbage, or a file of zeros) is skipped without being held whole.
 */
export async function readRecords(
  path: string,
  onRecord: (record: JournalRecord, bytes: number) => void,
): Promise<{ bad: number; records: number }> {
  let bad = 0;
  let records = 0;
  const limit = 2 * MAX_RECORD_BYTES;
  let parts: Buffer[] = [];
  let partBytes = 0;
  let skipping = false;
  const take = (line: Buffer) => {
    if (line.length === 0 || line.toString("utf8").trim().length === 0) return;
    let record: JournalRecord;
    try {
      record = JSON.parse(line.toString("utf8")) as JournalRecord;
    } catch {
      bad++;
      return;
    }
    records++;
    onRecord(record, line.length + 1);
  };
  let stream: AsyncIterable<Buffer>;
  try {
    const handle = await open(path, "r");
    stream = handle.createReadStream({ highWaterMark: 1024 * 1024 });
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return { bad, records };
    throw error;
  }
  for await (const chunk of stream) {
    let from = 0;
    for (;;) {
      const nl = chunk.indexOf(10, from);
      const piece = chunk.subarray(from, nl === -1 ? chunk.length : nl);
      if (!skipping) {
        parts.push(piece);
        partBytes += piece.length;
        if (partBytes > limit) {
          skipping = true;
          parts = [];
          partBytes = 0;
        }
      }
      if (nl === -1) break;
      if (skipping) bad++;
      else take(parts.length === 1 ? parts[0]! : Buffer.concat(parts));
      skipping = false;
      parts = [];
      partBytes = 0;
      from = nl + 1;
    }
  }
  if (skipping) bad++;
  else if (partBytes > 0) take(Buffer.concat(parts));
  return { bad, records };
}

/** Writes all of `bytes` to a descriptor opened for appending. */
function writeAll(fd: number, bytes: Buffer): void {
  let written = 0;
  while (written < bytes.length) written += writeSync(fd, bytes, written, bytes.length - written);
}

/** fsync of a directory, so that a rename in it survives a power cut. Best effort where the OS refuses. */
async function syncDir(dir: string): Promise<void> {
  const handle = await open(dir, "r").catch(() => undefined);
  if (!handle) return;
  try {
    await handle.sync().catch(() => {});
  } finally {
    await handle.close();
  }
}
