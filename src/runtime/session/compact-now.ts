import { buildContext, DEFAULT_GROUP_HISTORY_LIMIT } from "../../agent/build-context.js";
import { compactionLine } from "../../agent/compaction-hook.js";
import { writeCompactionNotes } from "../../agent/compaction-notes.js";
import { estimateTokens } from "../../agent/estimate-tokens.js";
import { extractiveNotes, notesMessage, planCompaction } from "../../agent/plan-compaction.js";
import { formatTokens } from "../../core/format.js";
import { sessionModel } from "../../sessions/session-model.js";
import { makeHeader, newEntryId } from "../../sessions/transcript.js";
import type { CompactionEntry } from "../../sessions/types.js";
import type { SessionPorts } from "./ports.js";
import { SessionTranscript } from "./session-transcript.js";
import { DEFAULT_SYSTEM_PROMPT } from "./turn-input.js";

/**
 * `/compact` (docs/sessions.md): compacts the session's context now, as a turn would past its threshold
 * (plan-compaction.ts decides what is kept; the notes are one sidecar call within `sidecarLlmSeconds`, else the
 * extractive notes), appends the `compaction` entry and returns the answer: "context compacted: 12k -> 3k tokens"
 * (estimates of the context before and after), or why there was nothing to compact. Runs in the session's lane
 * (the worker's `compactNow`), never beside a turn of the same session.
 */
export async function compactNow(ports: SessionPorts, key: string): Promise<string> {
  const { config, clock, logger } = ports.runtime;
  const agent = config.inbound.reply.agent;
  const entry = await ports.storage.store.getWithUpdates(key);
  if (!entry) return "Nothing to compact: this session has no messages yet.";
  const transcript = new SessionTranscript(
    ports,
    ports.storage.store.transcriptPath(entry.sessionId),
    makeHeader(entry.sessionId, key, new Date(clock.now())),
  );
  const resume = await transcript.readForResume();
  const messages = buildContext({
    systemPrompt: agent.systemPrompt ?? DEFAULT_SYSTEM_PROMPT,
    ...(resume.compaction ? { compaction: resume.compaction } : {}),
    entries: resume.entries,
    groupHistoryLimit: config.inbound.groupChat.historyLimit ?? DEFAULT_GROUP_HISTORY_LIMIT,
  });
  const before = estimateTokens(messages);
  const plan = planCompaction(messages, {
    window: agent.contextTokens,
    ...config.inbound.reply.session.compaction,
  });
  if (plan.dropped.length === 0 && plan.clearedToolResults === 0)
    return `Nothing to compact: the context is ${formatTokens(before)} tokens, all of it recent messages.`;
  const llm = ports.model.llm();
  const model = sessionModel(entry, ports.model.name());
  const sidecarSeconds = config.inbound.reply.session.timeouts.sidecarLlmSeconds;
  const written =
    plan.dropped.length > 0 && llm && model
      ? await writeCompactionNotes({
          dropped: plan.dropped,
          models: [agent.compactionModel ?? model, ...(agent.fallbackModel ? [agent.fallbackModel] : [])],
          llm,
          clock,
          signal: AbortSignal.timeout(sidecarSeconds * 1000 + 1000),
          sidecarSeconds,
        })
      : { notes: undefined, errors: [] };
  if (written.notes === undefined && written.errors.length > 0)
    logger.warn("compaction notes could not be written; the extractive reduction stands", {
      session: key,
      errors: written.errors.join("; "),
    });
  const notes = written.notes ?? extractiveNotes(plan.dropped);
  const after = estimateTokens([...plan.head, ...(notes ? [notesMessage(notes)] : []), ...plan.kept]);
  const compaction: CompactionEntry & Record<string, unknown> = {
    type: "compaction",
    id: newEntryId(),
    ts: new Date(clock.now()).toISOString(),
    notes,
    kept: plan.kept,
    replacedEntries: plan.dropped.length,
    tokensBefore: before,
    tokensAfter: after,
    clearedToolResults: plan.clearedToolResults,
    notesBy: written.notes !== undefined ? written.model : "extractive",
    requestedBy: "/compact",
  };
  await transcript.append([compaction], { fsync: true });
  await ports.storage.store.update(key, (current) =>
    current && current.sessionId === entry.sessionId
      ? {
          ...current,
          contextTokens: after,
          contextEstimated: true,
          compactionCount: (current.compactionCount ?? 0) + 1,
        }
      : current,
  );
  logger.info("session compacted on request", { session: key, tokensBefore: before, tokensAfter: after });
  return compactionLine(before, after);
}
