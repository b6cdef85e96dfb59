import type { InboundMessage } from "../plugin-api/types.js";
import type { ApprovalAsk, ApprovalDecisionKind } from "./approval-record.js";
import { fromJournalMessage, type JournalMessageV2, toJournalMessage } from "./journal-record.js";
import type { TranscriptEntry } from "./types.js";

/**
 * What the inbound journal (journal.ts) knows from its records: the records left open, the dedupe keys and, while
 * the file is read at open, the `reply` records no `synced` covers yet. `apply` takes records as they are on disk
 * (read at open, or written and fsync'd); `compactLines` is the file that keeps only what is still needed.
 */

/** The largest record one message may put in the journal (its text and metadata, as JSON). */
export const MAX_RECORD_BYTES = 2 * 1024 * 1024;
/** Open (not yet answered) records may hold at most this much; beyond it new messages are refused for now. */
export const MAX_OPEN_BYTES = 256 * 1024 * 1024;

export type JournalOutcome = "replied" | "failed-told" | "filtered" | "interrupted";

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
  | { op: "synced"; at: number; upTo: string }
  /**
   * A tool call waits for the person's answer (approval-record.ts); pending until its `approval-decided`. These
   * two kinds came after the others: a reader that does not know them skips them (every reader ignores an
   * unknown `op`), so an older clawdis reads a newer file and only loses the prompts.
   */
  | { op: "approval-asked"; at: number; ask: ApprovalAsk }
  /** The answer to approval `id`, by whom (`channel:sender`, or `local`), with the reason of a denial. */
  | {
      op: "approval-decided";
      at: number;
      id: string;
      decision: ApprovalDecisionKind;
      by: string;
      reason?: string;
    };

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

export function dedupeKey(message: Pick<InboundMessage, "channel" | "messageId">): string {
  return `${message.channel}\u0000${message.messageId}`;
}

export class JournalState {
  readonly open = new Map<string, OpenRecord>();
  readonly seen: string[] = [];
  readonly seenSet = new Set<string>();
  /** Approvals asked and not decided yet, by id, oldest first. */
  readonly asks = new Map<string, ApprovalAsk>();
  openBytes = 0;
  /** While the file is read at open: the `reply` records no `synced` covers yet, in file order. */
  unsynced: UnsyncedReply[] | undefined;

  constructor(private readonly dedupeLimit: number) {}

  apply(record: JournalRecord, bytes: number): void {
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
        // Also in the send thread's confirmations: a part counts once.
        const delivered = this.open.get(record.jid)?.delivered;
        if (delivered && !delivered.includes(record.part)) delivered.push(record.part);
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
      case "approval-asked":
        this.asks.set(record.ask.id, record.ask);
        break;
      case "approval-decided":
        this.asks.delete(record.id);
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
    while (this.seen.length > this.dedupeLimit) this.seenSet.delete(this.seen.shift()!);
  }

  /** The lines of a file with only what is still needed: the dedupe keys, the open records, the pending asks. */
  compactLines(): string[] {
    const lines: string[] = [JSON.stringify({ op: "seen", keys: this.seen } satisfies JournalRecord)];
    for (const open of this.open.values()) {
      const msg =
        open.local === undefined ? open.message : toJournalMessage(open.message, { local: open.local });
      lines.push(JSON.stringify({ op: "accept", jid: open.jid, at: open.acceptedAt, msg }));
      for (const part of open.delivered)
        lines.push(JSON.stringify({ op: "delivered", jid: open.jid, at: open.acceptedAt, part }));
    }
    for (const ask of this.asks.values())
      lines.push(JSON.stringify({ op: "approval-asked", at: ask.at, ask } satisfies JournalRecord));
    return lines;
  }
}
