// Just over 400 lines: the journal's one contract (below) over one file: accept, reply, end, delivered, approvals,
// compaction and repair share its state and its group commit; the state, the writer and the reading of records
// are in journal-state.ts, journal-writer.ts and read-records.ts.
import { randomUUID } from "node:crypto";
import { mkdir, rm } from "node:fs/promises";
import { join } from "node:path";
import { ClawdisError, describeError } from "../core/errors.js";
import type { Logger } from "../core/logger.js";
import type { InboundMessage } from "../plugin-api/types.js";
import type { ApprovalAsk, ApprovalDecisionKind } from "./approval-record.js";
import { toJournalMessage } from "./journal-record.js";
import {
  dedupeKey,
  type JournalOutcome,
  type JournalRecord,
  JournalState,
  MAX_OPEN_BYTES,
  MAX_RECORD_BYTES,
  type OpenRecord,
  type ReplyEnd,
  type UnsyncedReply,
} from "./journal-state.js";
import { JournalWriter } from "./journal-writer.js";
import { readRecords } from "./read-records.js";
import type { TranscriptEntry } from "./types.js";

export {
  dedupeKey,
  type JournalOutcome,
  type JournalRecord,
  MAX_OPEN_BYTES,
  MAX_RECORD_BYTES,
  type OpenRecord,
  type ReplyEnd,
  type UnsyncedReply,
} from "./journal-state.js";

/**
 * The durable inbound journal: `<state>/journal/inbound.jsonl`.
 *
 * Contract:
 * - `accept` is fsync'd before it resolves; only then is the transport told the message was received.
 *   `acceptWritten` resolves as soon as the record is written (a crash of the process keeps it; a power cut may
 *   not), with `durable` for the fsync: the caller may start work meanwhile, but tells the transport, answers or
 *   acts only once `durable` resolved (see gateway.ts receive).
 * - Every accepted record ends as exactly one of `replied`, `failed-told`, `filtered`, `interrupted` (an automated
 *   turn a person ended: never resumed), with a reason.
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
 * - `inbound.confirmed.jsonl` beside the file (`confirmationsPath`) holds `delivered` / `end` records that the
 *   gateway's send thread appended the moment a chat app took a reply (runtime/send-thread/): read at open after
 *   the file, as if they followed it, and removed once a compaction at open has written what they say into it.
 *   Render them with `deliveredLine` / `endLines`.
 * - A turn's reply is on disk before it is sent: `reply` holds the turn's transcript entries (the person's
 *   message, tool calls and results, the final answer), written to the transcript without fsync and made durable
 *   here, in the group commit with other turns' records, instead of by one fsync of each transcript. The caller
 *   syncs the transcripts behind its `reply` records (`syncTranscripts`, within about a second) and notes each
 *   pass with `markSynced`. A `reply` record with no `synced` after it that covers it is unsynced: at open, before the
 *   file is compacted, `repair` is given those records (the transcript lines a power cut may have taken are put
 *   back from them); compaction, which drops them, first calls `syncTranscripts`; `close` does too, then marks.
 *   A process that could not repair what it found claims nothing: it writes no `synced` and does not compact.
 */

function deliveredRecord(jid: string, part: number, now: number): JournalRecord {
  return { op: "delivered", jid, at: now, part };
}

function endRecord(jid: string, outcome: JournalOutcome, now: number, reason?: string): JournalRecord {
  return { op: "end", jid, at: now, outcome, ...(reason ? { reason } : {}) };
}

/** How often an end that could not be written is tried again. */
const END_RETRY_MS = 1000;

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

export class Journal {
  private readonly path: string;
  private readonly state: JournalState;
  private readonly writer: JournalWriter;
  /** Dedupe keys of accepts being written: duplicates already, forgotten again if the write fails. */
  private readonly inflight = new Set<string>();
  private closing = false;
  /** Unsynced replies found at open that could not be repaired yet; until they are: no `synced`, no compaction. */
  private unrepaired: UnsyncedReply[] = [];
  private repair: ((replies: UnsyncedReply[]) => Promise<void>) | undefined;

  constructor(private readonly options: JournalOptions) {
    this.path = join(options.dir, "inbound.jsonl");
    this.state = new JournalState(options.dedupeLimit ?? 10_000);
    this.writer = new JournalWriter({
      path: this.path,
      dir: options.dir,
      logger: options.logger,
      ...(options.compactEvery !== undefined ? { compactEvery: options.compactEvery } : {}),
      ...(options.compactBytes !== undefined ? { compactBytes: options.compactBytes } : {}),
      state: this.state,
      ...(options.syncTranscripts ? { syncTranscripts: options.syncTranscripts } : {}),
      repairNow: () => this.repairNow(),
    });
  }

  get filePath(): string {
    return this.path;
  }

  /** The send thread's file of records (see the class contract). */
  get confirmationsPath(): string {
    return join(this.options.dir, "inbound.confirmed.jsonl");
  }

  /** The line `markDelivered(jid, part, now)` writes. */
  deliveredLine(jid: string, part: number, now: number): string {
    return `${JSON.stringify(deliveredRecord(jid, part, now))}\n`;
  }

  /** The lines `end` writes for each of `ends`, with `outcome`. */
  endLines(
    ends: { jid: string; reason?: string | undefined }[],
    outcome: JournalOutcome,
    now: number,
  ): string {
    let lines = "";
    for (const { jid, reason } of ends) lines += `${JSON.stringify(endRecord(jid, outcome, now, reason))}\n`;
    return lines;
  }

  /**
   * Reads the journal (streaming, line by line) and returns the records left open by the previous run (oldest
   * first). Compacts the file first unless `compact` is false (a one-shot `clawdis agent` run leaves the file as
   * it is); a file that already holds exactly what the compaction would write is left as it is.
   */
  async openJournal(
    options: { compact?: boolean; repair?: (replies: UnsyncedReply[]) => Promise<void> } = {},
  ): Promise<OpenRecord[]> {
    await mkdir(this.options.dir, { recursive: true, mode: 0o700 });
    this.state.unsynced = [];
    const apply = (record: JournalRecord, bytes: number) => this.state.apply(record, bytes);
    const { bad, whole } = await readRecords(this.path, apply);
    // What the send thread recorded follows the file: only `delivered` and `end` records, for records in it.
    const confirmed = await readRecords(this.confirmationsPath, (record) => {
      if (record.op === "delivered" || record.op === "end") apply(record, 0);
    });
    this.unrepaired = this.state.unsynced;
    this.state.unsynced = undefined;
    this.repair = options.repair;
    for (const [path, lines] of [
      [this.path, bad],
      [this.confirmationsPath, confirmed.bad],
    ] as const) {
      if (lines > 0) this.options.logger.warn("journal: skipped lines that do not parse", { path, lines });
    }
    const compact = options.compact !== false && (await this.repairNow());
    // A file that is already what the compaction would write (the usual restart) is kept as it is: no temp file,
    // fsync, rename and directory fsync on the way to listening. It needs no sync either: its bytes came from a
    // compaction (fsync'd before its rename) or from appends that were fsync'd before anything relied on them.
    if (compact && !(whole !== undefined && this.writer.isCompact(whole))) await this.writer.compact();
    await this.writer.reopen();
    // The file on disk now says what the confirmations said.
    if (compact && (confirmed.records > 0 || confirmed.bad > 0))
      await rm(this.confirmationsPath, { force: true });
    return [...this.state.open.values()];
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
    await this.writer.write(record, line);
    return true;
  }

  /** The newest `reply` record in the file: sync the transcripts, then `markSynced` it. */
  lastReplyWritten(): string | undefined {
    return this.writer.lastReply;
  }

  /**
   * Notes that every transcript line behind the `reply` records up to `upTo` is on disk. Never throws (a mark
   * that is not written only leaves more to check at the next open). Nothing is written while replies found at
   * open are not repaired.
   */
  async markSynced(upTo: string, now: number): Promise<void> {
    if (this.unrepaired.length > 0 || this.writer.closed) return;
    const record: JournalRecord = { op: "synced", at: now, upTo };
    await this.writer.write(record, `${JSON.stringify(record)}\n`).catch(() => {});
  }

  /** Resolves once every record queued so far is written and fsync'd (or failed). */
  async settled(): Promise<void> {
    await this.writer.settled();
  }

  /** Whether this message was already accepted (now, being written, or in an earlier run). */
  isDuplicate(message: Pick<InboundMessage, "channel" | "messageId">): boolean {
    const key = dedupeKey(message);
    return this.state.seenSet.has(key) || this.inflight.has(key);
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
    if (this.state.openBytes + bytes > (this.options.maxOpenBytes ?? MAX_OPEN_BYTES)) {
      throw new ClawdisError(
        "STATE_BUSY",
        `too many unanswered messages (${this.state.open.size}, ${this.state.openBytes} bytes) wait in the journal; retry later`,
      );
    }
    const key = dedupeKey(message);
    this.inflight.add(key);
    return new Promise((resolve, reject) => {
      const durable = this.writer.write(record, line, () => resolve({ jid, durable }));
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
    const record = deliveredRecord(jid, part, now);
    await this.writer.write(record, `${JSON.stringify(record)}\n`);
  }

  /**
   * Ends a record. Never throws: an end that cannot be written (a full disk) is kept and written again every
   * second until it is (and at `close`); until then the record counts as open, and a crash meanwhile replays it
   * (the transcript tells the replay how far it got).
   */
  async end(jid: string, outcome: JournalOutcome, now: number, reason?: string): Promise<void> {
    const record = endRecord(jid, outcome, now, reason);
    const line = `${JSON.stringify(record)}\n`;
    try {
      await this.writer.write(record, line);
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
        await this.writer.write(next.record, next.line);
      } catch {
        this.scheduleEndRetry();
        return;
      }
      this.unwrittenEnds.shift();
    }
  }

  /** Records that approval `ask` waits (fsync'd before this resolves). */
  async approvalAsked(ask: ApprovalAsk): Promise<void> {
    const record: JournalRecord = { op: "approval-asked", at: ask.at, ask };
    await this.writer.write(record, `${JSON.stringify(record)}\n`);
  }

  /** Records the answer to approval `id` (fsync'd before this resolves): it no longer waits. */
  async approvalDecided(
    id: string,
    decision: ApprovalDecisionKind,
    by: string,
    now: number,
    reason?: string,
  ): Promise<void> {
    const record: JournalRecord = {
      op: "approval-decided",
      at: now,
      id,
      decision,
      by,
      ...(reason !== undefined ? { reason } : {}),
    };
    await this.writer.write(record, `${JSON.stringify(record)}\n`);
  }

  /** The approvals asked and not decided (on disk), oldest first. */
  pendingApprovals(): ApprovalAsk[] {
    return [...this.state.asks.values()];
  }

  get(jid: string): OpenRecord | undefined {
    return this.state.open.get(jid);
  }

  openCount(): number {
    return this.state.open.size;
  }

  /** Bytes the open records take (what the journal holds that is not answered yet). */
  openByteCount(): number {
    return this.state.openBytes;
  }

  async close(): Promise<void> {
    // A last try for ends that could not be written; what still fails stays open for the next start.
    this.closing = true;
    clearTimeout(this.endRetry);
    await this.writeUnwrittenEnds().catch(() => {});
    const upTo = this.writer.lastReply;
    if (upTo && this.writer.isOpen) {
      try {
        await this.options.syncTranscripts?.();
        await this.markSynced(upTo, Date.now());
      } catch (error) {
        // The next open checks the transcripts behind these replies instead.
        this.options.logger.warn("could not sync the transcripts at close", { error: describeError(error) });
      }
    }
    await this.writer.close();
  }
}
