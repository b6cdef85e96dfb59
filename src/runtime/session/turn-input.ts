import { buildContext, DEFAULT_GROUP_HISTORY_LIMIT } from "../../agent/build-context.js";
import type { LlmClient } from "../../agent/llm-client.js";
import type { TurnInput } from "../../agent/run-turn.js";
import type { ClawdisConfig } from "../../core/config-schema.js";
import { parseChatCommand } from "../../routing/chat-command.js";
import { authorityOf } from "../../routing/inbound-pipeline/admission-steps.js";
import type { ReplyEnd } from "../../sessions/journal.js";
import { matchResetTrigger } from "../../sessions/lifecycle.js";
import { resumeBudgetBytes } from "../../sessions/transcript-resume.js";
import type { MessageEntry, SessionEntry, StoredChatMessage, TranscriptEntry } from "../../sessions/types.js";
import { interruptsTurn } from "../authority/authority.js";
import { gatedLlm } from "../gated-llm.js";
import { keepArtifact } from "../keep-artifact.js";
import { restoreGuard } from "../restore-guard.js";
import { readResumeCached } from "../tail-cache.js";
import type { WorkItem } from "../work-item.js";
import { applySettlement, notify, taken } from "./apply-settlement.js";
import type { SessionPorts } from "./ports.js";
import { withWorkspace } from "./session-workspace.js";
import type { TurnContext } from "./turn-context.js";
import type { TurnEvents } from "./turn-events.js";

export const DEFAULT_SYSTEM_PROMPT =
  "You are clawdis, the owner's personal assistant. They reach you from several chat apps (WhatsApp, Telegram, " +
  "a web chat, a terminal); it is one conversation. Answer briefly and plainly, as in a chat. Use the tools " +
  "when they help.";

/** What the turn of a message runs with, besides its context. */
export interface TurnSetup {
  llm: LlmClient;
  model: string;
  /** The person's message as stored (written again if the transcript lost it). */
  text: string;
  /** The key's entry as the session was chosen on (read-only); absent: read from the store. */
  entry?: SessionEntry;
  /** The session's working directory. */
  cwd: string;
  /** Aborted by `/stop` (and a shutdown past its drain deadline). */
  signal: AbortSignal;
  /** Aborted when the gateway drains. */
  drain: AbortSignal;
  events: TurnEvents;
  /** Holds a joined message's outcome until the turn is over (as the item's is). */
  hold(item: WorkItem): void;
  /** The parked batch this turn resumes (an approval's answer, which stores no message of its own). */
  resume?: TurnInput["resume"];
  /**
   * An automated turn only: called at a tool-batch boundary with the first waiting message that ends it
   * (`interruptsTurn`); the turn then ends before its next model call (its `drain` aborts).
   */
  interruptBy?(item: WorkItem): void;
}

/**
 * The turn's input: the context resumed from the transcript (bounded by the model's window), the tools with the
 * session's workspace, the loop guard to go on from, and the hooks through which the turn writes the transcript
 * (`ctx.transcript`, tracing what it did in `ctx.trace`), publishes its events and takes in messages that join it
 * (`ctx.joined`).
 */
export async function buildTurnInput(
  ports: SessionPorts,
  ctx: TurnContext,
  setup: TurnSetup,
): Promise<{ input: TurnInput; entry: SessionEntry | undefined }> {
  const { config, clock, logger } = ports.runtime;
  const { item, transcript, trace } = ctx;
  const key = transcript.key;
  const agent = config.inbound.reply.agent;
  // Bounded by the model's window, whatever the size of the file (a 1 GB transcript reads about 1 MB here).
  const read = () =>
    readResumeCached(transcript.warm(), transcript.path, resumeBudgetBytes(agent.contextTokens));
  let resume = await read();
  // From the newest entry back: the person's message was just written, so it is found at once.
  const said = (entries: TranscriptEntry[]) =>
    entries.findLast(
      (e) =>
        e.type === "message" &&
        (e as MessageEntry).meta?.journalId === item.jid &&
        (e as MessageEntry).message.role === "user",
    );
  const hasMessage = (entries: TranscriptEntry[]) =>
    entries.findLastIndex((e) => e.type === "message" && (e as MessageEntry).meta?.journalId === item.jid) !==
    -1;
  if (!setup.resume && !hasMessage(resume.entries)) {
    // The transcript went away after the message was written (deleted by hand: a reset): write it again, so the
    // model never answers a turn that does not hold the message it answers.
    logger.warn("the person's message is no longer in the transcript (deleted?); writing it again", {
      path: transcript.path,
    });
    await transcript.storeUserMessage(item, setup.text);
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
      path: transcript.path,
      offsets: resume.badLines.map((b) => b.offset).join(","),
    });
  }
  if (resume.budgetCut) {
    logger.warn("transcript is longer than the model's window: its oldest part was left out of this turn", {
      path: transcript.path,
      bytesLeftOut: resume.budgetCut.bytesLeftOut,
      toolResultsDropped: resume.budgetCut.toolResultsDropped,
    });
  }
  const built = buildContext({
    systemPrompt: agent.systemPrompt ?? DEFAULT_SYSTEM_PROMPT,
    ...(resume.compaction ? { compaction: resume.compaction } : {}),
    entries: resume.entries,
    groupHistoryLimit: groupHistoryLimit(config),
  });
  // A resumed batch's waiting calls get their results from this turn, not the "interrupted" stand-ins.
  const waiting = new Set(setup.resume?.calls.map((c) => c.id) ?? []);
  const messages =
    waiting.size === 0 ? built : built.filter((m) => m.role !== "tool" || !waiting.has(m.tool_call_id ?? ""));
  // One stat of the store per message, not two: the entry the session was chosen on a moment ago.
  const entry = setup.entry ?? (await ports.storage.store.getWithUpdates(key));
  // A turn that runs again (restart, retry) goes on with its loop guard; a new message starts a new one.
  const guard = item.restored ? restoreGuard(resume.compaction, resume.entries, item.jid) : undefined;
  // The person's message as the transcript holds it (written by this run or the one before).
  const stored = said(resume.entries);
  trace.unsynced = stored ? [stored] : [];
  // A reply to the local API ends its records with its journal record (the API's answer follows it at once,
  // as it follows an `end`); a transport's are ended by the outbox once the chat has the reply.
  const localEnds = (entries: TranscriptEntry[]): ReplyEnd[] =>
    item.local && entries.some(isFinalAnswer) ? replyEnds(item, ctx.joined) : [];
  const sender = `${item.message.channel}\u0000${item.message.senderId}`;
  const thinking = entry?.thinkingLevel;
  const { events } = setup;
  const log = ports.storage.sessionLogs?.at(ctx.paths.log);
  if (log) events.logTo(log);
  const input: TurnInput = {
    turnId: events.turnId,
    sessionKey: key,
    model: setup.model,
    messages,
    tools: withWorkspace(ports.model.toolsFor(key, item.message), setup.cwd),
    // The request goes out while the message's journal fsync runs; its answer is used only once that is done.
    llm: item.durable ? gatedLlm(setup.llm, () => taken(item)) : setup.llm,
    append: async (entries, options) => {
      if (options?.final === true) await transcript.appendDurably(entries, trace, localEnds(entries));
      else {
        await transcript.append(entries);
        trace.unsynced.push(...entries);
      }
      trace.entries.push(...entries);
      events.appended(entries);
    },
    emit: (event) => {
      if (event.type === "delta" && event.text.length > 0) trace.textStreamed = true;
      if (event.type === "tool-call") trace.callsStarted.push(event.callId);
      events.observe(event);
    },
    takeJoined: async () => {
      if (setup.interruptBy) {
        // An automated turn takes no one in; a person who may end it ends it here, after its batch.
        const by = ports.queue.findWaiting?.(key, (other) => interrupts(other));
        if (by) setup.interruptBy(by);
        return [];
      }
      const resetTriggers = config.inbound.reply.session.resetTriggers;
      const others = ports.queue.takeJoinable(key, (other) => joinable(other, sender, resetTriggers));
      const added: StoredChatMessage[] = [];
      for (const other of others) {
        try {
          await taken(other);
        } catch {
          await applySettlement(ports, { kind: "refused" }, { key, item: other });
          continue;
        }
        setup.hold(other);
        const message = await transcript.storeUserMessage(other, other.text, events.turnId);
        trace.unsynced.push(message);
        added.push(message.message);
        ctx.joined.push(other);
      }
      return added;
    },
    notify: (line) => notify(ports, item, line),
    onPhase: (phase) => ports.storage.sessions?.enter(key, phase),
    ...(guard ? { guard } : {}),
    ...(setup.resume ? { resume: setup.resume } : {}),
    hooks: [
      ...(ports.model.approvalGate ? [ports.model.approvalGate(setup.cwd)] : []),
      ...(ports.model.turnHooks ? [ports.model.turnHooks] : []),
    ],
    compaction: {
      budget: { window: agent.contextTokens, ...config.inbound.reply.session.compaction },
      notesModels: [
        agent.compactionModel ?? setup.model,
        ...(agent.fallbackModel ? [agent.fallbackModel] : []),
      ],
      sidecarSeconds: config.inbound.reply.session.timeouts.sidecarLlmSeconds,
    },
    ...(entry?.contextTokens !== undefined && !entry.contextEstimated
      ? { previousContextTokens: entry.contextTokens }
      : {}),
    signal: setup.signal,
    drain: setup.drain,
    clock,
    timeouts: config.inbound.reply.session.timeouts,
    maxOutputTokens: agent.maxOutputTokens,
    cwd: setup.cwd,
    log: logger,
    attach: (file) => {
      ctx.attachments.push(file);
      events.file(file);
      void keepArtifact(file.path, ctx.paths.artifacts, item.jid.slice(0, 8), logger);
    },
    meta: { channel: item.message.channel, chatId: item.message.chatId, journalId: item.jid },
    ...(thinking && thinking !== "off" ? { reasoningEffort: thinking } : {}),
  };
  return { input, entry };
}

/** Whether a waiting message ends a running automated turn (runtime/authority: a trusted person's, not the core's). */
function interrupts(other: WorkItem): boolean {
  const m = other.message;
  return (
    other.contextOnly !== true &&
    interruptsTurn("automated", {
      authority: m.authority ?? authorityOf(m, other.local),
      internal: m.internal !== undefined,
    })
  );
}

/** A waiting message joins the running turn when it is from the same person, not automated, and not a command. */
function joinable(item: WorkItem, sender: string, resetTriggers: string[]): boolean {
  if (item.message.automated || item.restored) return false;
  if (`${item.message.channel}\u0000${item.message.senderId}` !== sender) return false;
  if (parseChatCommand(item.text).kind !== "none") return false;
  return !matchResetTrigger(item.text, resetTriggers).matched;
}

/** `inbound.groupChat.historyLimit`. */
function groupHistoryLimit(config: ClawdisConfig): number {
  return config.inbound.groupChat.historyLimit ?? DEFAULT_GROUP_HISTORY_LIMIT;
}

/** A turn's final answer (not a compaction entry or another line that is synced the same way). */
function isFinalAnswer(entry: TranscriptEntry): boolean {
  return entry.type === "message" && (entry as MessageEntry).meta?.final === true;
}

/** The records a reply ends, with the reasons `deliver` gives them: the message's, then those that joined it. */
function replyEnds(item: WorkItem, joined: WorkItem[]): ReplyEnd[] {
  return [{ jid: item.jid }, ...joined.map((w) => ({ jid: w.jid, reason: `answered with ${item.jid}` }))];
}
