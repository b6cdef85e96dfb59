import { describeError } from "../../core/errors.js";
import type { ReplyEnd } from "../../sessions/journal.js";
import { type AppendOptions, appendTranscript, newEntryId } from "../../sessions/transcript.js";
import { resumeBudgetBytes } from "../../sessions/transcript-resume.js";
import type { TranscriptWriter } from "../../sessions/transcript-writer.js";
import type {
  GroupContextEntry,
  MessageEntry,
  StoredChatMessage,
  TranscriptEntry,
  TranscriptHeader,
} from "../../sessions/types.js";
import type { WarmSession } from "../session-registry.js";
import { noteWritten, readResumeCached, syncFile } from "../tail-cache.js";
import type { WorkItem } from "../work-item.js";
import type { SessionPorts } from "./ports.js";

/** What a turn did that a drain decides on (see drain-resume.ts). */
export interface TurnTrace {
  /** The entries the turn appended (responses, tool results, hook state). */
  entries: TranscriptEntry[];
  textStreamed: boolean;
  /** The tool calls that began to run (their `tool-call` event), in order. */
  callsStarted: string[];
  /**
   * The turn's transcript entries, in the order written, that no journal `reply` record (or fsync) made durable
   * yet: the person's message, those that joined, what the turn appended.
   */
  unsynced: TranscriptEntry[];
}

/** The entries a settlement appends (`SessionTranscript.appendSettled`). */
export type SettledEntries =
  /** The item as a `group-context` entry at `at`. */
  | { kind: "group-context"; item: WorkItem; at: number }
  /** A drained turn's calls without a result get one. */
  | { kind: "missing-results"; results: { callId: string; name: string; content: string }[] }
  /** A `turn-failed` entry per item. */
  | { kind: "unanswered"; items: WorkItem[]; reason: string }
  /** A `turn-interrupted` entry: the note later turns' model calls carry (an automated turn a person ended). */
  | { kind: "interrupted-note"; jid: string; note: string };

/**
 * One session's transcript as a message's turn writes it: through the file its warm session holds open (opened at
 * the first append after a load), keeping the warm tail in step with what was written.
 */
export class SessionTranscript {
  constructor(
    private readonly ports: SessionPorts,
    readonly path: string,
    readonly header: TranscriptHeader,
  ) {}

  get key(): string {
    return this.header.sessionKey;
  }

  /** The session's warm state (its tail cache), when the registry holds it. */
  warm(): WarmSession | undefined {
    return this.ports.storage.sessions?.peek(this.key);
  }

  /** What a turn resumes from: the transcript's tail within the model's window (from the warm tail when warm). */
  readForResume(): ReturnType<typeof readResumeCached> {
    const window = this.ports.runtime.config.inbound.reply.agent.contextTokens;
    return readResumeCached(this.warm(), this.path, resumeBudgetBytes(window));
  }

  /** Appends `entries`; returns the open writer they went through (a warm session's), if any. */
  async append(
    entries: TranscriptEntry[],
    options: Omit<AppendOptions, "header"> = {},
  ): Promise<TranscriptWriter | undefined> {
    const warm = this.warm();
    const writer = warm ? this.ports.storage.sessions?.writerFor(warm, this.path) : undefined;
    const withHeader: AppendOptions = { ...options, header: this.header };
    if (!warm || !writer) await appendTranscript(this.path, entries, withHeader);
    else noteWritten(warm, this.path, await writer.append(entries, withHeader));
    return writer;
  }

  /**
   * Appends entries that must be on disk before what follows is sent (a reply, a notice given as the final
   * answer, a compaction). In a hot session (`TranscriptSync.viaJournal`): written without fsync, then the turn's
   * entries not yet made durable go into one journal `reply` record (the group commit shares its fsync with other
   * turns' records; `ends` are the records it ends) and a pass syncs the transcript within a second. Otherwise, or
   * when that record would be too large, the transcript is fsync'd.
   */
  async appendDurably(entries: TranscriptEntry[], trace: TurnTrace, ends: ReplyEnd[] = []): Promise<void> {
    const sync = this.ports.storage.transcriptSync;
    const viaJournal = sync?.viaJournal(this.path) === true;
    const writer = await this.append(entries, { fsync: !viaJournal });
    trace.unsynced.push(...entries);
    if (!sync || !viaJournal) {
      sync?.noteSynced(this.path);
      trace.unsynced = [];
      return;
    }
    // After the write, before the record: the pass that covers the record syncs these lines.
    sync.noteWritten(this.path, writer);
    const { id: sessionId, sessionKey } = this.header;
    if (
      !(await this.ports.storage.journal.reply(
        sessionId,
        sessionKey,
        trace.unsynced,
        this.ports.runtime.clock.now(),
        ends,
      ))
    )
      await syncFile(this.path);
    trace.unsynced = [];
  }

  /** The person's message as a `message` entry, published as a `message` event (`joinedTurnId`: it joined one). */
  async storeUserMessage(item: WorkItem, text: string, joinedTurnId?: string): Promise<MessageEntry> {
    const { clock } = this.ports.runtime;
    const { events } = this.ports.delivery;
    const m = item.message;
    const message: StoredChatMessage = { role: "user", content: text };
    const entry: MessageEntry = {
      type: "message",
      id: newEntryId(),
      ts: new Date(clock.now()).toISOString(),
      message,
      meta: {
        channel: m.channel,
        chatId: m.chatId,
        senderId: m.senderId,
        ...(m.senderName ? { senderName: m.senderName } : {}),
        messageId: m.messageId,
        journalId: item.jid,
        ...(m.chatType === "group" ? { chatType: "group" as const } : {}),
        ...(m.automated ? { automated: true } : {}),
        ...(m.internal ? { internal: m.internal.kind } : {}),
      },
    };
    // No fsync: the journal holds the message durably, and a lost line is found missing and written on replay.
    await this.append([entry]);
    events.emit({
      type: "message",
      sessionKey: this.key,
      role: "user",
      text,
      channel: m.channel,
      chatId: m.chatId,
      journalId: item.jid,
      ...(joinedTurnId ? { turnId: joinedTurnId } : {}),
      ts: clock.now(),
    });
    return entry;
  }

  /**
   * The entries of a settlement (see SettledEntries). `turn-failed` entries are best effort: a failure to write
   * them is logged, never thrown.
   */
  async appendSettled(settled: SettledEntries): Promise<void> {
    const entries = settledEntries(settled, this.ports.runtime.clock.now());
    if (entries.length === 0) return;
    const written = this.append(entries);
    if (settled.kind !== "unanswered") {
      await written;
      return;
    }
    await written.catch((error: unknown) =>
      this.ports.runtime.logger.warn("could not mark an unanswered message", { error: describeError(error) }),
    );
  }
}

/**
 * The transcript entries of a settlement, at `now`. Pure but for the entries' ids.
 * - `group-context`: a group message that did not address the agent (who said what, at the time its session was
 *   chosen), shown to the model with the next answered message;
 * - `missing-results`: the tool results a drained turn's calls without one get, written before anything else of
 *   its settlement;
 * - `interrupted-note`: a `turn-interrupted` entry, shown to the model as its note (build-context.ts);
 * - `unanswered`: a `turn-failed` entry per message whose turn failed, so that later turns show it to the model
 *   as history that went unanswered, not as a pending question.
 */
function settledEntries(settled: SettledEntries, now: number): TranscriptEntry[] {
  const ts = new Date(now).toISOString();
  switch (settled.kind) {
    case "group-context": {
      const m = settled.item.message;
      const entry: GroupContextEntry = {
        type: "group-context",
        id: newEntryId(),
        ts: new Date(settled.at).toISOString(),
        senderId: m.senderId,
        ...(m.senderName ? { senderName: m.senderName } : {}),
        text: m.text,
        meta: { channel: m.channel, chatId: m.chatId, messageId: m.messageId, journalId: settled.item.jid },
      };
      return [entry];
    }
    case "missing-results":
      return settled.results.map((r) => ({
        type: "message",
        id: newEntryId(),
        ts,
        message: { role: "tool", tool_call_id: r.callId, content: r.content },
        meta: { tool: r.name, ok: false, refused: true },
      }));
    case "interrupted-note":
      return [{ type: "turn-interrupted", id: newEntryId(), ts, journalId: settled.jid, note: settled.note }];
    case "unanswered":
      return settled.items.map((w) => ({
        type: "turn-failed",
        id: newEntryId(),
        ts,
        journalId: w.jid,
        reason: settled.reason,
      }));
  }
}

/**
 * The final save of a session before it is unloaded: bookkeeping in flight (the store update after a turn)
 * finishes, and the transcript is flushed to disk (its lines are written without fsync during turns).
 */
export async function saveWarm(session: WarmSession): Promise<void> {
  await Promise.allSettled([...session.pending]);
  if (session.transcript && !session.transcript.isClosed) await session.transcript.sync();
  else {
    const path = session.transcriptPath ?? session.tail?.path;
    if (path) await syncFile(path);
  }
}
