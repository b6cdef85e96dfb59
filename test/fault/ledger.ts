import { readdir, readFile } from "node:fs/promises";
import { join } from "node:path";

/** How a message was handed in; each has its own acknowledgement. */
export type Via = "api" | "webhook" | "cli";

/** One message the scenario sent: its marker is unique in the whole run. */
export interface SentMessage {
  /** `<m17>`: appears in the stored user entry and in every reply of the fake model that answers it. */
  marker: string;
  /** `m17`: the marker without its brackets (safe inside a shell command). */
  id: string;
  via: Via;
  sessionKey: string;
  text: string;
  /**
   * Acknowledged: the SSE `accepted` event of `POST /api/agent`, a webhook's 202, or `clawdis agent`'s answer.
   * From then on the gateway owes an answer, across any crash.
   */
  acked: boolean;
  /** The journal id the acknowledgement named (API and webhooks). */
  journalId?: string;
  /** What the sender got back at the end, when it waits for it (the `done` payloads, `clawdis agent`'s output). */
  answer?: string;
}

export interface TornLine {
  file: string;
  lineNumber: number;
  text: string;
}

/** What the transcripts say about the messages of a run. */
export interface Audit {
  sent: number;
  acked: number;
  /** Acknowledged, and no final assistant reply (`meta.final`) answers it. */
  lost: string[];
  /** More than one final reply, or more than one stored user entry. */
  twice: string[];
  /** Lines of any transcript that are not JSON (lines the scenario wrote on purpose are not counted). */
  torn: TornLine[];
  /** Sent, not acknowledged, and never answered (allowed: the sender was told nothing). */
  unackedUnanswered: number;
  transcripts: number;
}

interface Entry {
  type?: string;
  message?: { role?: string; content?: unknown; tool_calls?: unknown[] };
  meta?: { final?: boolean; journalId?: string };
}

/**
 * The ledger of a fault-injection run: every message gets a unique marker, acknowledgements are recorded as they
 * arrive, and `audit` then reads every transcript of the store directory (also those no key points to any more)
 * and counts, per message, its stored user entries and its final replies: by the marker in the reply's text (the
 * fake model echoes every message it answers, joined ones too) and by the journal id of the reply (which catches a
 * message answered twice even when the second answer had nothing left to echo).
 */
export class Ledger {
  readonly messages: SentMessage[] = [];
  /** Lines a scenario wrote into transcripts on purpose (garbling faults); the audit does not count them as torn. */
  readonly injectedLines = new Set<string>();
  private counter = 0;

  constructor(private readonly prefix = "m") {}

  /** A new message with a fresh marker; `extra` is appended to the text (markers for the fake model). */
  mint(via: Via, sessionKey: string, extra = ""): SentMessage {
    const id = `${this.prefix}${++this.counter}`;
    const marker = `<${id}>`;
    const message: SentMessage = {
      marker,
      id,
      via,
      sessionKey,
      text: extra ? `${marker} ${extra}` : marker,
      acked: false,
    };
    this.messages.push(message);
    return message;
  }

  ack(message: SentMessage, journalId?: string): void {
    message.acked = true;
    if (journalId) message.journalId = journalId;
  }

  get ackedCount(): number {
    return this.messages.filter((m) => m.acked).length;
  }

  async audit(sessionsDir: string): Promise<Audit> {
    const files = (await readdir(sessionsDir).catch(() => [] as string[])).filter((f) =>
      f.endsWith(".jsonl"),
    );
    const users = new Map<string, number>();
    const finalsByMarker = new Map<string, number>();
    const finalsByJournal = new Map<string, number>();
    const journalOfUser = new Map<string, Set<string>>();
    const torn: TornLine[] = [];
    const markerPattern = new RegExp(`<${escapeRegExp(this.prefix)}\\d+>`, "g");
    for (const file of files) {
      // A file deleted while the audit runs (a scenario that deletes transcripts) has nothing left to count.
      const text = await readFile(join(sessionsDir, file), "utf8").catch(() => "");
      const lines = text.split("\n");
      lines.forEach((line, index) => {
        if (line.trim().length === 0) return;
        let entry: Entry;
        try {
          entry = JSON.parse(line) as Entry;
        } catch {
          if (!this.injectedLines.has(line))
            torn.push({ file, lineNumber: index + 1, text: line.slice(0, 200) });
          return;
        }
        if (entry.type !== "message" || !entry.message) return;
        const content = typeof entry.message.content === "string" ? entry.message.content : "";
        const markers = new Set(content.match(markerPattern) ?? []);
        const role = entry.message.role;
        if (role === "user") {
          for (const marker of markers) {
            users.set(marker, (users.get(marker) ?? 0) + 1);
            if (entry.meta?.journalId) {
              const set = journalOfUser.get(marker) ?? new Set<string>();
              set.add(entry.meta.journalId);
              journalOfUser.set(marker, set);
            }
          }
        }
        const isFinal =
          role === "assistant" && entry.meta?.final === true && !entry.message.tool_calls?.length;
        if (isFinal) {
          for (const marker of markers) finalsByMarker.set(marker, (finalsByMarker.get(marker) ?? 0) + 1);
          const jid = entry.meta?.journalId;
          if (jid) finalsByJournal.set(jid, (finalsByJournal.get(jid) ?? 0) + 1);
        }
      });
    }
    const lost: string[] = [];
    const twice: string[] = [];
    let unackedUnanswered = 0;
    for (const m of this.messages) {
      const jids = new Set(journalOfUser.get(m.marker) ?? []);
      if (m.journalId) jids.add(m.journalId);
      const byJournal = Math.max(0, ...[...jids].map((j) => finalsByJournal.get(j) ?? 0));
      const byMarker = finalsByMarker.get(m.marker) ?? 0;
      const userEntries = users.get(m.marker) ?? 0;
      const answered = byMarker > 0 || byJournal > 0;
      if (m.acked && !answered) lost.push(`${m.marker} (${m.via} → ${m.sessionKey})`);
      if (!m.acked && !answered) unackedUnanswered++;
      if (byMarker > 1 || byJournal > 1 || userEntries > 1) {
        twice.push(
          `${m.marker} (${m.via} → ${m.sessionKey}): ${byMarker} replies name it, ${byJournal} replies carry its journal id, ${userEntries} user entries`,
        );
      }
    }
    return {
      sent: this.messages.length,
      acked: this.ackedCount,
      lost,
      twice,
      torn,
      unackedUnanswered,
      transcripts: files.length,
    };
  }
}

/** One line for the test log: what was sent, acknowledged, lost, answered twice and torn. */
export function describeAudit(label: string, audit: Audit): string {
  const head = `[fault] ${label}: ${audit.sent} sent, ${audit.acked} acknowledged, ${audit.lost.length} lost, ${audit.twice.length} answered twice, ${audit.torn.length} torn lines, ${audit.unackedUnanswered} unacknowledged and unanswered, ${audit.transcripts} transcripts`;
  const details = [
    ...audit.lost.slice(0, 10).map((l) => `  lost: ${l}`),
    ...audit.twice.slice(0, 10).map((t) => `  twice: ${t}`),
    ...audit.torn.slice(0, 5).map((t) => `  torn: ${t.file}:${t.lineNumber} ${JSON.stringify(t.text)}`),
  ];
  return [head, ...details].join("\n");
}

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
}
