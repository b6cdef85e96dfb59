import { randomUUID } from "node:crypto";
import { setMaxListeners } from "node:events";
import { mkdir, stat } from "node:fs/promises";
import { join } from "node:path";
import { buildContext, DEFAULT_GROUP_HISTORY_LIMIT } from "../agent/build-context.js";
import type { LlmClient } from "../agent/llm-client.js";
import { runTurn, type TurnResult } from "../agent/run-turn.js";
import type { Clock } from "../core/clock.js";
import type { ClawdisConfig } from "../core/config-schema.js";
import { describeError } from "../core/errors.js";
import type { Logger } from "../core/logger.js";
import { noModelReply } from "../core/no-model-hint.js";
import type { InboundMessage, OutboundAttachment, ToolDefinition, TurnOutcome } from "../plugin-api/types.js";
import { parseChatCommand } from "../routing/chat-command.js";
import { sessionKeyFor } from "../routing/session-key.js";
import type { Journal, ReplyEnd } from "../sessions/journal.js";
import { matchResetTrigger, touchInteraction } from "../sessions/lifecycle.js";
import type { SessionStore } from "../sessions/store.js";
import { type AppendOptions, appendTranscript, makeHeader, newEntryId } from "../sessions/transcript.js";
import { resumeBudgetBytes } from "../sessions/transcript-resume.js";
import type {
  GroupContextEntry,
  MessageEntry,
  SessionEntry,
  StoredChatMessage,
  TranscriptEntry,
  TranscriptHeader,
} from "../sessions/types.js";
import { chooseSession, restoredProgress } from "./choose-session.js";
import { type DrainMode, decideDrainedTurn, drainNotice } from "./drain-resume.js";
import type { EventBus } from "./event-bus.js";
import { gatedLlm } from "./gated-llm.js";
import type { Delivery, Outbox } from "./outbox.js";
import { restoreGuard } from "./restore-guard.js";
import type { SessionRegistry, WarmSession } from "./session-registry.js";
import { stageAttachments } from "./stage-attachments.js";
import { noteWritten, readResumeCached, syncFile } from "./tail-cache.js";
import type { TranscriptSync } from "./transcript-sync.js";
import { isTransientError, retryDelayMs } from "./transient-error.js";
import { formatTurnNotice } from "./turn-notice.js";
import type { WorkItem } from "./work-item.js";

export type { WorkItem } from "./work-item.js";

export interface SessionRunnerDeps {
  config: ClawdisConfig;
  store: SessionStore;
  journal: Journal;
  clock: Clock;
  logger: Logger;
  events: EventBus;
  workspaceDir: string;
  /** Where plugins stage inbound attachments (`<state>/plugins`); files elsewhere are never moved. */
  stagingRoot: string;
  llm(): LlmClient | undefined;
  modelName(): string | undefined;
  /** Resolves when the model is known (it may be the endpoint's only model, found by the first check). */
  modelReady?(): Promise<void>;
  toolsFor(key: string, message: InboundMessage): ToolDefinition[];
  /** Where replies and notices to chats go (parked while their transport is down). */
  outbox: Outbox;
  takeJoinable(key: string, predicate: (item: WorkItem) => boolean): WorkItem[];
  isStopping(): boolean;
  /** Runs `item` again after `delayMs` (its journal record stays open; progress is read from the transcript). */
  retryLater(item: WorkItem, delayMs: number): void;
  /** What is held warm per session (the transcript tail, bookkeeping in flight); absent: nothing is kept. */
  sessions?: SessionRegistry;
  /** How many messages wait for `key` behind its running turn (a drained turn's resume decision). */
  waiting?(key: string): number;
  /**
   * Decides how a `final` write (a reply, a compaction) is made durable, and syncs behind the transcripts whose
   * replies the journal holds. Present: in a hot session by a journal `reply` record, else by an fsync of the
   * transcript; absent: always by the fsync.
   */
  transcriptSync?: TranscriptSync;
  /** The config file the gateway reads (full path): the no-model notice names it. */
  configPath(): string;
}

export const DEFAULT_SYSTEM_PROMPT =
  "You are clawdis, the owner's personal assistant. They reach you from several chat apps (WhatsApp, Telegram, " +
  "a web chat, a terminal); it is one conversation. Answer briefly and plainly, as in a chat. Use the tools " +
  "when they help.";

/** How long a reader of a session's entry (its next turn, `/status`) waits for the store update of its last turn. */
const RECORD_WAIT_MS = 1000;

/**
 * Write-behind of the store update after a turn: it may wait this long to share one rewrite of `sessions.json`
 * with the updates of other turns (store-batches.ts; a lone update is written DEFER_QUIET_MS after it). The journal,
 * not the store, holds what was accepted: a crash in this window loses only the turn's bookkeeping (usage, the last
 * exchange's time), never a message.
 */
export const RECORD_DEFER_MS = 1000;

/** How often the store update after a turn is tried before it is given up (the reply is out by then). */
const RECORD_TURN_ATTEMPTS = 5;

interface RunningTurn {
  controller: AbortController;
  turnId: string;
}

/** What a turn did that a drain decides on (see drain-resume.ts). */
interface TurnTrace {
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

/**
 * Runs the work of one session key, one item at a time (the SessionQueue guarantees that). Decides the
 * sessionId (idle expiry, reset triggers, deleted keys or transcripts), writes the person's message to the
 * transcript, runs the turn, records usage on the store entry and sends the reply to the chat it came from.
 * Every accepted journal record ends as replied, failed-told or filtered — except when the gateway stops
 * mid-turn: then it stays open and is finished after the next start.
 */
export class SessionRunner {
  private readonly running = new Map<string, RunningTurn>();
  /** Every store update after a turn not written yet (`/status` waits for its session's: `recorded`). */
  private readonly recordings = new Set<Promise<void>>();
  /** The same, by session key. */
  private readonly recordingsOf = new Map<string, Set<Promise<void>>>();
  /** Set by `drain`: turns that start from now on are drained from their start. */
  private draining: DrainMode | undefined;
  /**
   * Aborted by `drain`, with its mode: every turn's `TurnInput.drain` (a turn ends at its next safe point,
   * run-turn.ts). One for all turns: a drain is for the whole runner, once; a signal per turn cost every message
   * one more AbortSignal. Every running model call listens on it: no listener limit (Node warns past 10).
   */
  private readonly drainController = new AbortController();

  constructor(private readonly deps: SessionRunnerDeps) {
    setMaxListeners(0, this.drainController.signal);
  }

  /**
   * A stop or restart begins: every running turn (and any that starts from now on) ends at its next safe point,
   * and its person is told `mode` in one line (docs/runtime.md, Stopping and restarting).
   */
  drain(mode: DrainMode): void {
    this.draining ??= mode;
    this.drainController.abort(this.draining);
  }

  /** Aborts the running turn of `key`; false when none runs. */
  abort(key: string, reason: "stop" | "shutdown"): boolean {
    const turn = this.running.get(key);
    if (!turn) return false;
    turn.controller.abort(reason);
    return true;
  }

  abortAll(reason: "stop" | "shutdown"): void {
    for (const turn of this.running.values()) turn.controller.abort(reason);
  }

  outcomeFor(
    item: WorkItem,
    stopReason: TurnOutcome["stopReason"],
    payloads: string[],
    error?: string,
    extra: Partial<TurnOutcome> = {},
  ): TurnOutcome {
    return {
      sessionKey: extra.sessionKey ?? item.sessionKey,
      sessionId: extra.sessionId ?? "",
      payloads: [...(item.notices ?? []), ...payloads].map((text) => ({ text })),
      stopReason,
      durationMs: this.deps.clock.now() - item.message.receivedAt,
      ...(error ? { error } : {}),
      ...extra,
    };
  }

  /** Answers a command at once (no model), ends its journal record as replied. */
  async answer(item: WorkItem, text: string, extra: Partial<TurnOutcome> = {}): Promise<void> {
    if (extra.sessionId === undefined) {
      const sessionId = (await this.deps.store.get(item.sessionKey))?.sessionId;
      if (sessionId) extra = { ...extra, sessionId };
    }
    // Sent through the outbox, which ends the record once the chat has it (at once for local items).
    await this.deliver(item, text, "notice", { end: [item.jid] });
    item.resolve(this.outcomeFor(item, "command", [text], undefined, extra));
  }

  async process(key: string, item: WorkItem): Promise<void> {
    if (this.deps.isStopping()) {
      item.resolve(this.outcomeFor(item, "aborted", [], "the gateway is stopping", { sessionKey: key }));
      return;
    }
    // The session's phase (session/phase.ts): processing while its work runs, ready after. The queue touched it in.
    this.deps.sessions?.enter(key, "processing");
    try {
      await this.handle(key, item);
    } catch (error) {
      if (item.refused || error instanceof NotTaken) await this.dropRefused(key, item);
      else if (isTransientError(error)) this.keepForRetry(item, error);
      else await this.fail(item, error);
    } finally {
      this.deps.sessions?.enter(key, "ready");
      // The idle time before passivation counts from the end of the work.
      this.deps.sessions?.touch(key);
    }
  }

  /**
   * The final save of a session before it is unloaded: bookkeeping in flight (the store update after a turn)
   * finishes, and the transcript is flushed to disk (its lines are written without fsync during turns).
   */
  async saveWarm(session: WarmSession): Promise<void> {
    await Promise.allSettled([...session.pending]);
    if (session.transcript && !session.transcript.isClosed) await session.transcript.sync();
    else {
      const path = session.transcriptPath ?? session.tail?.path;
      if (path) await syncFile(path);
    }
  }

  /**
   * Resolves once the store updates of `key`'s finished turns (no key: of every session's) are written, waiting at
   * most RECORD_WAIT_MS (on the injected clock): a reply goes out before its turn's update, which waits to share a
   * write (RECORD_DEFER_MS), and what `/status` and `GET /api/sessions` read must include it. Any waiting update
   * is written at once. (The session's next turn does not wait: it reads the entry with the update applied,
   * `SessionStore.getWithUpdates`.)
   */
  async recorded(key?: string): Promise<void> {
    const pending = key === undefined ? this.recordings : this.recordingsOf.get(key);
    if (!pending || pending.size === 0) return;
    void this.deps.store.flush();
    let timer: unknown;
    const late = new Promise<void>((resolve) => {
      timer = this.deps.clock.setTimeout(resolve, RECORD_WAIT_MS);
    });
    await Promise.race([Promise.allSettled([...pending]), late]);
    this.deps.clock.clearTimeout(timer);
  }

  /**
   * Resolves once every store update after a turn is written (or failed): a stop waits for them, so nothing writes
   * to the store directory once the gateway has stopped. Each is bounded by the store's lock wait.
   */
  async recordingsSettled(): Promise<void> {
    while (this.recordings.size > 0) {
      void this.deps.store.flush();
      await Promise.allSettled([...this.recordings]);
    }
  }

  /** The session's warm state (its tail cache), when the registry holds it. */
  private warm(key: string): WarmSession | undefined {
    return this.deps.sessions?.peek(key);
  }

  /**
   * Appends to a session's transcript through the file its warm session holds open (opened at the first append
   * after a load), and keeps its warm tail in step with what was written.
   */
  private async append(
    key: string,
    path: string,
    entries: TranscriptEntry[],
    options: AppendOptions,
  ): Promise<void> {
    const warm = this.warm(key);
    const writer = warm ? this.deps.sessions?.writerFor(warm, path) : undefined;
    if (!warm || !writer) await appendTranscript(path, entries, options);
    else noteWritten(warm, path, await writer.append(entries, options));
  }

  /**
   * Appends entries that must be on disk before what follows is sent (a reply, a notice given as the final
   * answer, a compaction). In a hot session (`TranscriptSync.viaJournal`): written without fsync, then the turn's
   * entries not yet made durable go into one journal `reply` record (the group commit shares its fsync with other
   * turns' records) and a pass syncs the transcript within a second. Otherwise, or when that record would be too
   * large, the transcript is fsync'd.
   */
  private async appendDurably(
    key: string,
    run: { transcriptPath: string; header: TranscriptHeader },
    entries: TranscriptEntry[],
    trace: TurnTrace,
    ends: ReplyEnd[] = [],
  ): Promise<void> {
    const sync = this.deps.transcriptSync;
    const viaJournal = sync?.viaJournal(run.transcriptPath) === true;
    await this.append(key, run.transcriptPath, entries, { header: run.header, fsync: !viaJournal });
    trace.unsynced.push(...entries);
    if (!sync || !viaJournal) {
      sync?.noteSynced(run.transcriptPath);
      trace.unsynced = [];
      return;
    }
    // After the write, before the record: the pass that covers the record syncs these lines.
    sync.noteWritten(run.transcriptPath);
    const { id: sessionId, sessionKey } = run.header;
    if (!(await this.deps.journal.reply(sessionId, sessionKey, trace.unsynced, this.deps.clock.now(), ends)))
      await syncFile(run.transcriptPath);
    trace.unsynced = [];
  }

  /**
   * A failure that passes by itself (a full disk, a store lock held elsewhere): the record stays open and the
   * item runs again after a growing delay, resuming from what the transcript shows it got to; a restart finishes
   * it too. Whoever waits for the outcome is told at the first failure that the message is kept.
   */
  private keepForRetry(item: WorkItem, error: unknown): void {
    const attempt = (item.attempt ?? 0) + 1;
    const delayMs = retryDelayMs(attempt);
    const why = describeError(error);
    this.deps.logger.warn("message kept after a passing failure; trying again", {
      sessionKey: item.sessionKey,
      journalId: item.jid,
      attempt,
      retryInMs: delayMs,
      error: why,
    });
    if (attempt === 1) {
      const text = `Your message is kept and will be answered once this clears: ${why}.`;
      item.resolve(this.outcomeFor(item, "error", [text], why, { sessionKey: item.sessionKey }));
    }
    const restored = this.deps.journal.get(item.jid);
    this.deps.retryLater(
      {
        ...item,
        attempt,
        notices: [],
        resolve: () => {},
        ...(restored ? { restored } : {}),
      },
      delayMs,
    );
  }

  /**
   * The message's journal record could not be made durable after its turn began (`Gateway.receive` told the
   * transport it was not taken, so it comes again). Every way out to the person waits for `taken` and stops
   * there; `dropRefused` then ends the item quietly.
   */
  refuse(item: WorkItem): void {
    item.refused = true;
  }

  /** Waits until `item` is durably accepted; throws NotTaken when it was not (see WorkItem.durable). */
  private async taken(item: WorkItem): Promise<void> {
    if (!item.durable) return;
    try {
      await item.durable;
    } catch (error) {
      item.refused = true;
      throw new NotTaken(error);
    }
  }

  /**
   * A refused item: no reply, nothing ended in the journal (its record never counted); its line in the
   * transcript, if written, is marked unanswered (so its retry does not read as a second, pending question).
   */
  private async dropRefused(key: string, item: WorkItem): Promise<void> {
    this.deps.logger.warn(
      "a message was not taken (its journal record could not be made durable); not answered",
      {
        sessionKey: key,
        journalId: item.jid,
      },
    );
    const sessionId = (await this.deps.store.get(key).catch(() => undefined))?.sessionId;
    if (sessionId) {
      const header = makeHeader(sessionId, key, new Date(this.deps.clock.now()));
      await this.markUnanswered(this.deps.store.transcriptPath(sessionId), header, [item], "not taken");
    }
    item.resolve(this.outcomeFor(item, "aborted", [], "the message was not taken", { sessionKey: key }));
  }

  /** An unexpected failure (a bug, a disk error): logged, the person is told, the record ends, never thrown. */
  async fail(item: WorkItem, error: unknown): Promise<void> {
    if (item.refused || error instanceof NotTaken) {
      await this.dropRefused(item.sessionKey, item);
      return;
    }
    const why = describeError(error);
    this.deps.logger.error("message handling failed unexpectedly", {
      sessionKey: item.sessionKey,
      error: why,
    });
    const text = `Something went wrong: ${why}. The session is ready for your next message.`;
    await this.deliver(item, text, "notice").catch(() => {});
    await this.deps.journal.end(item.jid, "failed-told", this.deps.clock.now(), why).catch(() => {});
    item.resolve(this.outcomeFor(item, "error", [text], why, { sessionKey: item.sessionKey }));
  }

  private async handle(key: string, item: WorkItem): Promise<void> {
    const { clock, store, journal, config } = this.deps;
    const now = clock.now();
    const reset = matchResetTrigger(item.text, config.inbound.reply.session.resetTriggers);
    const progress = item.restored ? await restoredProgress(store, key, item.jid) : undefined;
    const { sessionId, notice, entry, started } = progress
      ? { sessionId: progress.sessionId, notice: undefined, entry: undefined, started: undefined }
      : await chooseSession(
          { store, logger: this.deps.logger, idleMinutes: config.inbound.reply.session.idleMinutes },
          key,
          reset.matched,
          now,
        );
    // Watchers (the web chat) replace the old conversation with the new one before anything of it arrives.
    if (started)
      this.deps.events.emit({ type: "session", sessionKey: key, sessionId, reason: started, ts: now });
    const ids = { sessionKey: key, sessionId };
    if (item.contextOnly) {
      await this.keepAsContext(item, sessionId, key, now);
      return;
    }

    if (reset.matched && reset.rest.trim().length === 0 && !progress) {
      await this.answer(item, "New session started.", ids);
      return;
    }
    const said = reset.matched ? reset.rest : item.text;
    const files = item.message.attachments?.length
      ? await stageAttachments(item.message.attachments, {
          cwd: this.cwdFor(key),
          jid: item.jid,
          stagingRoot: this.deps.stagingRoot,
        })
      : [];
    const quoted = quoteLine(item.message.replyTo);
    const text = [quoted, said, ...files]
      .filter((t): t is string => t !== undefined && t.length > 0)
      .join("\n");
    const header = makeHeader(sessionId, key, new Date(now));
    const transcriptPath = store.transcriptPath(sessionId);
    if (!progress?.userStored) await this.storeUserMessage(item, text, transcriptPath, header);
    if (notice) await this.notify(item, notice);

    if (progress?.reply !== undefined) {
      // Found in the transcript, maybe not on disk (its journal record may have failed): synced before it is sent.
      await syncFile(transcriptPath);
      await this.finishReply(key, item, [], progress.reply, ids, undefined);
      return;
    }
    // A model to be found at the endpoint (its only one) is known once the first check is done. While that check
    // runs, a command (/think, /verbose) may change the entry: the turn then reads it again.
    const modelKnown = this.deps.modelName() !== undefined;
    await this.deps.modelReady?.();
    const llm = this.deps.llm();
    const model = this.deps.modelName();
    if (!llm || !model) {
      const told = noModelReply(this.deps.configPath());
      await this.deliver(item, told, "notice");
      await this.markUnanswered(transcriptPath, header, [item], "no model configured");
      await journal.end(item.jid, "failed-told", clock.now(), "no model configured");
      this.recordTurnLater(key, item, undefined);
      item.resolve(this.outcomeFor(item, "error", [told], "no model configured", ids));
      return;
    }
    await this.runModelTurn(key, item, {
      llm,
      model,
      transcriptPath,
      header,
      ids,
      text,
      ...(modelKnown && entry ? { entry } : {}),
    });
  }

  /**
   * A `turn-failed` entry per message whose turn failed, so that later turns show it to the model as history
   * that went unanswered, not as a pending question. Best effort.
   */
  private async markUnanswered(
    transcriptPath: string,
    header: TranscriptHeader,
    items: WorkItem[],
    reason: string,
  ): Promise<void> {
    const ts = new Date(this.deps.clock.now()).toISOString();
    const entries = items.map((w) => ({
      type: "turn-failed",
      id: newEntryId(),
      ts,
      journalId: w.jid,
      reason,
    }));
    await this.append(header.sessionKey, transcriptPath, entries, { header }).catch((error: unknown) =>
      this.deps.logger.warn("could not mark an unanswered message", { error: describeError(error) }),
    );
  }

  /**
   * The session's working directory (tools, attachments): the workspace for the primary session (`mainKey`, or
   * `global` under `scope: "global"`), a folder per other key. Not created here: a turn that runs no tool and
   * stages no file never touches it; the first tool call of a turn creates it (0700) when it is not there
   * (`withWorkspace`), and staging an attachment creates its inbox in it.
   */
  private cwdFor(key: string): string {
    return key === sessionKeyFor({ chatType: "direct", chatId: "" }, this.deps.config.inbound.reply.session)
      ? this.deps.workspaceDir
      : join(this.deps.workspaceDir, safeDirName(key));
  }

  /**
   * A group message that did not address the agent: written to the group's transcript as a `group-context`
   * entry (who said what), shown to the model with the next answered message; not answered, and not a real
   * exchange for idle expiry. Its record ends `filtered`.
   */
  private async keepAsContext(item: WorkItem, sessionId: string, key: string, now: number): Promise<void> {
    const m = item.message;
    const entry: GroupContextEntry = {
      type: "group-context",
      id: newEntryId(),
      ts: new Date(now).toISOString(),
      senderId: m.senderId,
      ...(m.senderName ? { senderName: m.senderName } : {}),
      text: m.text,
      meta: { channel: m.channel, chatId: m.chatId, messageId: m.messageId, journalId: item.jid },
    };
    await this.append(key, this.deps.store.transcriptPath(sessionId), [entry], {
      header: makeHeader(sessionId, key, new Date(now)),
    });
    await this.deps.journal.end(
      item.jid,
      "filtered",
      this.deps.clock.now(),
      "not addressed: kept as group context",
    );
    item.resolve(this.outcomeFor(item, "filtered", [], undefined, { sessionKey: key, sessionId }));
  }

  private async storeUserMessage(
    item: WorkItem,
    text: string,
    transcriptPath: string,
    header: TranscriptHeader,
    joinedTurnId?: string,
  ): Promise<MessageEntry> {
    const m = item.message;
    const message: StoredChatMessage = { role: "user", content: text };
    const entry: MessageEntry = {
      type: "message",
      id: newEntryId(),
      ts: new Date(this.deps.clock.now()).toISOString(),
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
      },
    };
    // No fsync: the journal holds the message durably, and a lost line is found missing and written on replay.
    await this.append(header.sessionKey, transcriptPath, [entry], { header });
    this.deps.events.emit({
      type: "message",
      sessionKey: header.sessionKey,
      role: "user",
      text,
      channel: m.channel,
      chatId: m.chatId,
      journalId: item.jid,
      ...(joinedTurnId ? { turnId: joinedTurnId } : {}),
      ts: this.deps.clock.now(),
    });
    return entry;
  }

  private async runModelTurn(
    key: string,
    item: WorkItem,
    run: {
      llm: LlmClient;
      model: string;
      transcriptPath: string;
      header: TranscriptHeader;
      ids: { sessionKey: string; sessionId: string };
      /** The person's message as stored (written again if the transcript lost it). */
      text: string;
      /** The key's entry as the session was chosen on (read-only); absent: read from the store. */
      entry?: SessionEntry;
    },
  ): Promise<void> {
    const { config, clock, events, logger } = this.deps;
    const agent = config.inbound.reply.agent;
    // Bounded by the model's window, whatever the size of the file (a 1 GB transcript reads about 1 MB here).
    const read = () =>
      readResumeCached(this.warm(key), run.transcriptPath, resumeBudgetBytes(agent.contextTokens));
    let resume = await read();
    // From the newest entry back: the person's message was just written, so it is found at once.
    const hasMessage = (entries: typeof resume.entries) =>
      entries.findLastIndex(
        (e) => e.type === "message" && (e as MessageEntry).meta?.journalId === item.jid,
      ) !== -1;
    if (!hasMessage(resume.entries)) {
      // The transcript went away after the message was written (deleted by hand: a reset): write it again, so the
      // model never answers a turn that does not hold the message it answers.
      logger.warn("the person's message is no longer in the transcript (deleted?); writing it again", {
        path: run.transcriptPath,
      });
      await this.storeUserMessage(item, run.text, run.transcriptPath, run.header);
      resume = await read();
    }
    // bytesRead 0: from the warm tail, without touching the file.
    logger.debug("context resumed", {
      session: key,
      bytesRead: resume.bytesRead,
      entries: resume.entries.length,
    });
    if (resume.badLines.length > 0) {
      logger.warn("transcript has lines that do not parse; they were skipped", {
        path: run.transcriptPath,
        offsets: resume.badLines.map((b) => b.offset).join(","),
      });
    }
    if (resume.budgetCut) {
      logger.warn("transcript is longer than the model's window: its oldest part was left out of this turn", {
        path: run.transcriptPath,
        bytesLeftOut: resume.budgetCut.bytesLeftOut,
        toolResultsDropped: resume.budgetCut.toolResultsDropped,
      });
    }
    const messages = buildContext({
      systemPrompt: agent.systemPrompt ?? DEFAULT_SYSTEM_PROMPT,
      ...(resume.compaction ? { compaction: resume.compaction } : {}),
      entries: resume.entries,
      groupHistoryLimit: groupHistoryLimit(config),
    });
    // One stat of the store per message, not two: the entry the session was chosen on a moment ago.
    const entry = run.entry ?? (await this.deps.store.getWithUpdates(key));
    const cwd = this.cwdFor(key);
    // A turn that runs again (restart, retry) goes on with its loop guard; a new message starts a new one.
    const guard = item.restored ? restoreGuard(resume.compaction, resume.entries, item.jid) : undefined;

    const joined: WorkItem[] = [];
    const sender = `${item.message.channel}\u0000${item.message.senderId}`;
    const controller = new AbortController();
    const drain = this.drainController;
    // The person's message as the transcript holds it (written by this run or the one before).
    const said = resume.entries.findLast(
      (e) =>
        e.type === "message" &&
        (e as MessageEntry).meta?.journalId === item.jid &&
        (e as MessageEntry).message.role === "user",
    );
    const trace: TurnTrace = {
      entries: [],
      textStreamed: false,
      callsStarted: [],
      unsynced: said ? [said] : [],
    };
    // A reply to the local API ends its records with its journal record (the API's answer follows it at once,
    // as it follows an `end`); a transport's are ended by the outbox once the chat has the reply.
    const localEnds = (entries: TranscriptEntry[]): ReplyEnd[] =>
      item.local && entries.some(isFinalAnswer) ? replyEnds(item, joined) : [];
    const turnId = randomUUID();
    const startedAt = clock.now();
    const chat = { channel: item.message.channel, chatId: item.message.chatId };
    // Outcomes resolve after the turn-end event and the turn's log line: whoever waits for a message's outcome
    // sees the turn over, as every watcher does.
    // Once the turn is over (`turnOver`), an outcome resolves at once: one given after it (a failure the turn threw,
    // kept for a retry: the "kept" notice) must still reach whoever waits (an API stream ends with it).
    const outcomes: (() => void)[] = [];
    let turnOver = false;
    const deferOutcome = (w: WorkItem) => {
      const resolve = w.resolve;
      w.resolve = (outcome) => {
        if (turnOver) resolve(outcome);
        else outcomes.push(() => resolve(outcome));
      };
    };
    deferOutcome(item);
    const attachments: OutboundAttachment[] = [];
    this.running.set(key, { controller, turnId });
    events.emit({
      type: "turn-start",
      sessionKey: key,
      turnId,
      journalId: item.jid,
      ...chat,
      ...(item.restored ? { replay: true } : {}),
      ts: clock.now(),
    });
    const verbose = entry?.verboseLevel === "on";
    const thinking = entry?.thinkingLevel;
    events.emit({ type: "processing", sessionKey: key, state: "thinking", ...chat, ts: clock.now() });
    let result: TurnResult | undefined;
    try {
      result = await runTurn({
        turnId,
        sessionKey: key,
        model: run.model,
        messages,
        tools: withWorkspace(this.deps.toolsFor(key, item.message), cwd),
        // The request goes out while the message's journal fsync runs; its answer is used only once that is done.
        llm: item.durable ? gatedLlm(run.llm, () => this.taken(item)) : run.llm,
        append: async (entries, options) => {
          if (options?.final === true) await this.appendDurably(key, run, entries, trace, localEnds(entries));
          else {
            await this.append(key, run.transcriptPath, entries, { header: run.header });
            trace.unsynced.push(...entries);
          }
          trace.entries.push(...entries);
        },
        emit: (event) => {
          if (event.type === "delta" && event.text.length > 0) trace.textStreamed = true;
          if (event.type === "tool-call") trace.callsStarted.push(event.callId);
          events.emit(event);
          if (event.type === "tool-call")
            events.emit({ type: "processing", sessionKey: key, state: "tool", ...chat, ts: clock.now() });
          if (event.type === "tool-result")
            events.emit({ type: "processing", sessionKey: key, state: "thinking", ...chat, ts: clock.now() });
          if (verbose && event.type === "tool-call") {
            void this.deliver(item, `⚙ ${event.name} ${truncate(event.arguments, 200)}`, "notice");
          }
        },
        takeJoined: async () => {
          const taken = this.deps.takeJoinable(key, (other) =>
            joinable(other, sender, config.inbound.reply.session.resetTriggers),
          );
          const added: StoredChatMessage[] = [];
          for (const other of taken) {
            try {
              await this.taken(other);
            } catch {
              await this.dropRefused(key, other);
              continue;
            }
            deferOutcome(other);
            const stored = await this.storeUserMessage(
              other,
              other.text,
              run.transcriptPath,
              run.header,
              turnId,
            );
            trace.unsynced.push(stored);
            added.push(stored.message);
            joined.push(other);
          }
          return added;
        },
        notify: (line) => this.notify(item, line),
        onPhase: (phase) => this.deps.sessions?.enter(key, phase),
        ...(guard ? { guard } : {}),
        compaction: {
          budget: { window: agent.contextTokens, ...config.inbound.reply.session.compaction },
          notesModels: [
            agent.compactionModel ?? run.model,
            ...(agent.fallbackModel ? [agent.fallbackModel] : []),
          ],
          sidecarSeconds: config.inbound.reply.session.timeouts.sidecarLlmSeconds,
        },
        ...(entry?.contextTokens !== undefined && !entry.contextEstimated
          ? { previousContextTokens: entry.contextTokens }
          : {}),
        signal: controller.signal,
        drain: drain.signal,
        clock,
        timeouts: config.inbound.reply.session.timeouts,
        maxOutputTokens: agent.maxOutputTokens,
        cwd,
        log: logger,
        attach: (file) => {
          attachments.push(file);
          events.emit({ type: "file", sessionKey: key, turnId, path: file.path, kind: file.kind });
        },
        meta: { channel: item.message.channel, chatId: item.message.chatId, journalId: item.jid },
        ...(thinking && thinking !== "off" ? { reasoningEffort: thinking } : {}),
      });
      this.running.delete(key);
      if (result.usage) {
        events.emit({
          type: "usage",
          sessionKey: key,
          turnId,
          promptTokens: result.usage.promptTokens,
          completionTokens: result.usage.completionTokens,
          contextTokens: result.contextTokens,
          estimated: result.contextEstimated,
        });
      }
      await this.settleTurn(key, item, joined, result, run, controller.signal, attachments, trace);
    } finally {
      this.running.delete(key);
      logger.info("turn", {
        session: key,
        channel: item.message.channel,
        durationMs: clock.now() - startedAt,
        promptTokens: result?.usage?.promptTokens,
        completionTokens: result?.usage?.completionTokens,
        contextTokens: result?.contextTokens,
        stopReason: result?.stopReason ?? "error",
        rounds: result?.rounds,
      });
      // The store's bookkeeping (usage, the last exchange) is written behind: the reply, the turn's end, its outcome
      // and the lane do not wait for the store's fsync'd rewrite, which waits to share one write with other turns'
      // (RECORD_DEFER_MS). The session's next turn decides on the entry with it applied, without waiting for the
      // write (`getWithUpdates`: idle expiry counts from this turn); `/status`, `Gateway.idle()` and a stop write
      // it at once.
      this.recordTurnLater(key, item, result);
      // Exactly one turn-end per turn-start, however the turn ended, and after its final message: watchers
      // (typing indicators, the web chat's bubble) stop on it.
      events.emit({
        type: "turn-end",
        sessionKey: key,
        turnId,
        stopReason: result?.stopReason ?? "error",
        ...chat,
        ts: clock.now(),
      });
      events.emit({ type: "processing", sessionKey: key, state: "idle", ...chat, ts: clock.now() });
      turnOver = true;
      for (const resolve of outcomes.splice(0)) resolve();
    }
  }

  /** `recordTurnSafely` in the background, tracked in `recordings` (and by the warm session) until written. */
  private recordTurnLater(key: string, item: WorkItem, result: TurnResult | undefined): void {
    const recording = this.recordTurnSafely(key, turnRecord(item, result, this.deps.clock.now()));
    this.recordings.add(recording);
    void recording.finally(() => this.recordings.delete(recording));
    let ofKey = this.recordingsOf.get(key);
    if (!ofKey) {
      ofKey = new Set();
      this.recordingsOf.set(key, ofKey);
    }
    ofKey.add(recording);
    const mine = ofKey;
    void recording.finally(() => {
      mine.delete(recording);
      if (mine.size === 0 && this.recordingsOf.get(key) === mine) this.recordingsOf.delete(key);
    });
    // Held by the warm session until done: its final save waits for it.
    const pending = this.warm(key)?.pending;
    pending?.add(recording);
    void recording.finally(() => pending?.delete(recording));
  }

  /** What follows a turn: the reply, or the notice and the records' end (a shutdown leaves them open). */
  private async settleTurn(
    key: string,
    item: WorkItem,
    joined: WorkItem[],
    result: TurnResult,
    run: { transcriptPath: string; header: TranscriptHeader; ids: { sessionKey: string; sessionId: string } },
    signal: AbortSignal,
    attachments: OutboundAttachment[],
    trace: TurnTrace,
  ): Promise<void> {
    const { clock } = this.deps;
    if (result.stopReason === "end" || (result.quiet && result.text)) {
      await this.finishReply(key, item, joined, result.text, run.ids, result, attachments);
      return;
    }
    const abortReason: unknown = signal.reason;
    // Drained at a safe point, or aborted when the drain deadline passed: either way the turn resumes.
    if (
      (result.drained && !signal.aborted) ||
      (result.stopReason === "aborted" && abortReason === "shutdown")
    ) {
      await this.settleDrained(key, item, joined, run, trace);
      return;
    }
    const told =
      result.stopReason === "aborted" ? undefined : formatTurnNotice(result.error ?? result.stopReason);
    if (told) await this.deliver(item, told, "notice");
    if (result.stopReason !== "aborted") {
      await this.markUnanswered(
        run.transcriptPath,
        run.header,
        [item, ...joined],
        result.error ?? result.stopReason,
      );
    }
    for (const w of [item, ...joined]) {
      await this.deps.journal.end(w.jid, "failed-told", clock.now(), result.error ?? result.stopReason);
      w.resolve(
        this.outcomeFor(w, result.stopReason, told ? [told] : [], result.error ?? result.stopReason, {
          ...run.ids,
          model: result.model,
          ...(result.usage ? { usage: result.usage } : {}),
        }),
      );
    }
  }

  /**
   * A turn a drain ended at a safe point, or aborted at the drain deadline (docs/runtime.md, Stopping and
   * restarting): it resumes. Its tool calls without a result get one (not run, or cut short: `decideDrainedTurn`),
   * written before anything else, so the resumed turn knows and runs none of them again silently; the person is
   * told in one line; the records of messages that joined the turn end (its resumed reply answers them); its own
   * record stays open, and the next start runs the turn again from the transcript, before the messages that
   * waited behind it (the replay keeps the order the journal accepted them in).
   */
  private async settleDrained(
    key: string,
    item: WorkItem,
    joined: WorkItem[],
    run: { transcriptPath: string; header: TranscriptHeader; ids: { sessionKey: string; sessionId: string } },
    trace: TurnTrace,
  ): Promise<void> {
    const mode = this.draining ?? "stopping";
    const decision = decideDrainedTurn({
      entries: trace.entries,
      textStreamed: trace.textStreamed,
      callsStarted: trace.callsStarted,
      othersWaiting: this.deps.waiting?.(key) ?? 0,
    });
    const text = drainNotice(mode, decision);
    this.deps.logger.info("turn drained", {
      session: key,
      journalId: item.jid,
      action: decision.action,
      why: decision.why,
      ...(decision.results.length > 0 ? { callsWithoutResult: decision.results.length } : {}),
      othersWaiting: this.deps.waiting?.(key) ?? 0,
    });
    if (decision.results.length > 0) {
      const ts = new Date(this.deps.clock.now()).toISOString();
      await this.append(
        key,
        run.transcriptPath,
        decision.results.map((r) => ({
          type: "message",
          id: newEntryId(),
          ts,
          message: { role: "tool", tool_call_id: r.callId, content: r.content },
          meta: { tool: r.name, ok: false, refused: true },
        })),
        { header: run.header },
      );
    }
    await this.deliver(item, text, "notice");
    // Messages that joined the turn are in its context: the resumed turn's reply answers them with the first
    // (a replay takes each open record on its own, so theirs end now).
    for (const w of joined)
      await this.deps.journal.end(
        w.jid,
        "replied",
        this.deps.clock.now(),
        `joined ${item.jid}, which resumes`,
      );
    for (const w of [item, ...joined])
      w.resolve(this.outcomeFor(w, "aborted", [text], `the gateway is ${mode}`, run.ids));
  }

  /** The agent's final text as a `message` event (watchers: the web chat, `clawdis chat --attach`). */
  private publishReply(key: string, item: WorkItem, text: string): void {
    this.deps.events.emit({
      type: "message",
      sessionKey: key,
      role: "assistant",
      text,
      channel: item.message.channel,
      chatId: item.message.chatId,
      ts: this.deps.clock.now(),
    });
  }

  /**
   * The turn's reply: published, handed to the outbox (which ends the record of the message, and of those that
   * joined the turn, once the chat has every part; while the transport is down it waits, record open), the turn
   * recorded on the store entry, the outcome resolved. The person's reply never waits for the store.
   */
  private async finishReply(
    key: string,
    item: WorkItem,
    joined: WorkItem[],
    text: string,
    ids: { sessionKey: string; sessionId: string },
    result: TurnResult | undefined,
    attachments: OutboundAttachment[] = [],
  ): Promise<void> {
    this.publishReply(key, item, text);
    const outcomeExtra: Partial<TurnOutcome> = {
      ...ids,
      ...(result ? { model: result.model } : {}),
      ...(result?.usage ? { usage: result.usage } : {}),
    };
    await this.deliver(item, text, "reply", {
      end: [item.jid, ...joined.map((w) => w.jid)],
      attachments,
    });
    for (const w of [item, ...joined]) w.resolve(this.outcomeFor(w, "end", [text], undefined, outcomeExtra));
  }

  /**
   * `recordTurn` after the reply went out: bookkeeping never costs the person their answer. A failure is logged
   * and tried again in the background (a few times, growing delays).
   */
  private async recordTurnSafely(key: string, record: TurnRecord): Promise<void> {
    const attempt = async (n: number): Promise<void> => {
      try {
        // A retry is written at once: the first try already waited to share a write.
        await this.recordTurn(key, record, n === 1 ? RECORD_DEFER_MS : undefined);
      } catch (error) {
        if (n >= RECORD_TURN_ATTEMPTS) {
          this.deps.logger.error("could not record the turn on the session entry; gave up", {
            sessionKey: key,
            error: describeError(error),
          });
          return;
        }
        this.deps.logger.warn("could not record the turn on the session entry; trying again", {
          sessionKey: key,
          attempt: n,
          error: describeError(error),
        });
        this.deps.clock.setTimeout(() => void attempt(n + 1), retryDelayMs(n));
      }
    };
    await attempt(1);
  }

  /**
   * One store update per message: the person's message and (when there was one) the agent's reply are real
   * exchanges (`lastInteractionAt`); usage and the context in use come from the turn.
   */
  private async recordTurn(key: string, record: TurnRecord, deferMs: number | undefined): Promise<void> {
    const { at, origin, result } = record;
    await this.deps.store.update(
      key,
      (entry) => {
        if (!entry) return entry;
        const next: SessionEntry = { ...touchInteraction(entry, at), origin };
        if (!result) return next;
        next.model = result.model;
        next.contextTokens = result.contextTokens;
        next.contextEstimated = result.contextEstimated;
        if (result.compactions > 0) next.compactionCount = (entry.compactionCount ?? 0) + result.compactions;
        if (result.usage) {
          next.inputTokens = (entry.inputTokens ?? 0) + result.usage.promptTokens;
          next.outputTokens = (entry.outputTokens ?? 0) + result.usage.completionTokens;
          next.totalTokens = (entry.totalTokens ?? 0) + result.usage.totalTokens;
        }
        return next;
      },
      deferMs === undefined ? {} : { deferMs },
    );
  }

  /**
   * Sends text to the chat the item came from, through the outbox. `end`: journal records that this delivery
   * completes (ended `replied` once the chat has it; at once for local items, whose reply travels in the
   * outcome). Resolves once the chat has it or it waits for its transport: never waits for a transport that is
   * down.
   */
  private async deliver(
    item: WorkItem,
    text: string,
    kind: "reply" | "notice",
    options: { end?: string[]; attachments?: OutboundAttachment[] } = {},
  ): Promise<void> {
    // Nothing reaches the person before the message is durably accepted.
    await this.taken(item);
    const end = options.end ?? [];
    if (item.local) {
      // The API's answer follows the end on disk. A reply the journal holds ended its records already.
      for (const [index, jid] of end.entries()) {
        if (this.deps.journal.get(jid) === undefined) continue;
        await this.deps.journal.end(
          jid,
          "replied",
          this.deps.clock.now(),
          index > 0 ? `answered with ${end[0]}` : undefined,
        );
      }
      return;
    }
    const m = item.message;
    const delivery: Delivery = {
      channel: m.channel,
      chatId: m.chatId,
      chatType: m.chatType,
      text,
      kind,
      replyToMessageId: m.transportMessageId ?? m.messageId,
      ...(options.attachments?.length ? { attachments: options.attachments } : {}),
      ...(end.length > 0 ? { jid: end[0]!, alsoEnd: end.slice(1) } : {}),
      ...(item.restored && end[0] === item.jid ? { deliveredParts: item.restored.delivered } : {}),
    };
    // Sent, or waiting for its transport: the session goes on either way (the outbox ends the records).
    await this.deps.outbox.enqueue(delivery);
  }

  /**
   * A note before the reply ("a new session began"): published as a `notice` event, sent to the chat, and for
   * local (API) items put in front of the reply in the outcome's payloads.
   */
  private async notify(item: WorkItem, text: string): Promise<void> {
    this.deps.events.emit({ type: "notice", sessionKey: item.sessionKey, text, ts: this.deps.clock.now() });
    if (item.local) {
      item.notices ??= [];
      item.notices.push(text);
    } else {
      await this.deliver(item, text, "notice");
    }
  }
}

/** A waiting message joins the running turn when it is from the same person, not automated, and not a command. */
function joinable(item: WorkItem, sender: string, resetTriggers: string[]): boolean {
  if (item.message.automated || item.restored) return false;
  if (`${item.message.channel}\u0000${item.message.senderId}` !== sender) return false;
  if (parseChatCommand(item.text).kind !== "none") return false;
  return !matchResetTrigger(item.text, resetTriggers).matched;
}

/**
 * The turn's tools, the first call of which makes sure the working directory is there: when it is missing (never
 * made, or deleted since), it is created (0700) before the tool runs. A turn without tool calls touches nothing.
 */
function withWorkspace(tools: ToolDefinition[], cwd: string): ToolDefinition[] {
  let ready: Promise<void> | undefined;
  const ensure = () => {
    ready ??= stat(cwd).then(
      () => {},
      async (error: NodeJS.ErrnoException) => {
        if (error.code === "ENOENT") await mkdir(cwd, { recursive: true, mode: 0o700 });
      },
    );
    return ready;
  };
  return tools.map((tool) => ({
    name: tool.name,
    description: tool.description,
    parameters: tool.parameters,
    execute: async (args, context) => {
      await ensure();
      return tool.execute(args, context);
    },
  }));
}

function safeDirName(key: string): string {
  return key.replace(/[^A-Za-z0-9._-]/g, "_");
}

function truncate(text: string, max: number): string {
  return text.length > max ? `${text.slice(0, max)}…` : text;
}

/** `inbound.groupChat.historyLimit`. */
function groupHistoryLimit(config: ClawdisConfig): number {
  return config.inbound.groupChat.historyLimit ?? DEFAULT_GROUP_HISTORY_LIMIT;
}

/** The message a person replied to, as the model is shown it (one line, at most 300 characters of it). */
export function quoteLine(replyTo: InboundMessage["replyTo"]): string | undefined {
  if (!replyTo?.text) return undefined;
  const who = replyTo.fromAgent ? "your message" : (replyTo.senderName ?? replyTo.senderId ?? "a message");
  const text = replyTo.text.replace(/\s+/g, " ").trim();
  return `[In reply to ${who}: "${text.length > 300 ? `${text.slice(0, 300)}…` : text}"]`;
}

/**
 * What the store update after a turn writes, taken from the turn when it ends: only these fields (not the work
 * item or the turn's result, which the update may outlive by up to RECORD_DEFER_MS).
 */
interface TurnRecord {
  /** When the turn ended: the exchange's time (`lastInteractionAt`). */
  at: number;
  origin: NonNullable<SessionEntry["origin"]>;
  result?: Pick<TurnResult, "model" | "contextTokens" | "contextEstimated" | "compactions" | "usage">;
}

function turnRecord(item: WorkItem, result: TurnResult | undefined, at: number): TurnRecord {
  const m = item.message;
  const origin = {
    channel: m.channel,
    chatId: m.chatId,
    chatType: m.chatType,
    senderId: m.senderId,
    ...(m.senderName ? { senderName: m.senderName } : {}),
  };
  if (!result) return { at, origin };
  const { model, contextTokens, contextEstimated, compactions, usage } = result;
  return {
    at,
    origin,
    result: { model, contextTokens, contextEstimated, compactions, ...(usage ? { usage } : {}) },
  };
}

/** The message's journal record could not be made durable: it was not taken (see WorkItem.durable). */
class NotTaken extends Error {
  constructor(cause: unknown) {
    super(`the message was not taken: ${describeError(cause)}`, { cause });
  }
}

/** A turn's final answer (not a compaction entry or another line that is synced the same way). */
function isFinalAnswer(entry: TranscriptEntry): boolean {
  return entry.type === "message" && (entry as MessageEntry).meta?.final === true;
}

/** The records a reply ends, with the reasons `deliver` gives them: the message's, then those that joined it. */
function replyEnds(item: WorkItem, joined: WorkItem[]): ReplyEnd[] {
  return [{ jid: item.jid }, ...joined.map((w) => ({ jid: w.jid, reason: `answered with ${item.jid}` }))];
}
