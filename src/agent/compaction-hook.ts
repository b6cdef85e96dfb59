import { formatTokens } from "../core/format.js";
import { newEntryId } from "../sessions/transcript.js";
import type { CompactionEntry } from "../sessions/types.js";
import { writeCompactionNotes } from "./compaction-notes.js";
import { estimateTokens } from "./estimate-tokens.js";
import type { LoopGuardState } from "./loop-guard.js";
import { extractiveNotes, needsCompaction, notesMessage, planCompaction } from "./plan-compaction.js";
import type { TurnHooks } from "./turn-hooks.js";
import type { CompactionSettings, TurnInput } from "./turn-types.js";

/** The line the person is told: "context compacted: 152k -> 31k tokens". */
export function compactionLine(before: number, after: number): string {
  return `context compacted: ${formatTokens(before)} -> ${formatTokens(after)} tokens`;
}

/**
 * Compaction as a `prepareCall` hook: when the call's input tokens pass `threshold` of the window, plan it
 * (`plan-compaction.ts`), ask for notes (best effort, `compaction-notes.ts`; the extractive notes stand when
 * that fails), append a `compaction` entry (nothing is deleted: resume starts at the newest one; it carries
 * the loop guard's state), tell the person one line, and send the compacted messages.
 */
export function compactionHook(
  input: Pick<
    TurnInput,
    "llm" | "clock" | "signal" | "append" | "notify" | "log" | "sessionKey" | "meta" | "onPhase"
  >,
  settings: CompactionSettings,
  on: { guardState(): LoopGuardState; compacted(tokensAfter: number): void },
): TurnHooks {
  return {
    prepareCall: async ({ messages, inputTokens }) => {
      if (!needsCompaction(inputTokens, settings.budget)) return undefined;
      const plan = planCompaction(messages, settings.budget);
      if (plan.dropped.length === 0 && plan.clearedToolResults === 0) return undefined;
      input.onPhase?.("compacting");
      try {
        return await compact(plan, inputTokens);
      } finally {
        input.onPhase?.("processing");
      }
    },
  };

  async function compact(plan: ReturnType<typeof planCompaction>, inputTokens: number) {
    const written =
      plan.dropped.length > 0
        ? await writeCompactionNotes({
            dropped: plan.dropped,
            models: settings.notesModels,
            llm: input.llm,
            clock: input.clock,
            signal: input.signal,
            sidecarSeconds: settings.sidecarSeconds,
          })
        : { notes: undefined, errors: [] };
    if (written.notes === undefined && written.errors.length > 0) {
      input.log?.warn("compaction notes could not be written; the extractive reduction stands", {
        session: input.sessionKey,
        errors: written.errors.join("; "),
      });
    }
    const notes = written.notes ?? extractiveNotes(plan.dropped);
    const next = [...plan.head, ...(notes ? [notesMessage(notes)] : []), ...plan.kept];
    const tokensAfter = estimateTokens(next);
    const entry: CompactionEntry & Record<string, unknown> = {
      type: "compaction",
      id: newEntryId(),
      ts: new Date(input.clock.now()).toISOString(),
      notes,
      kept: plan.kept,
      replacedEntries: plan.dropped.length,
      tokensBefore: inputTokens,
      tokensAfter,
      clearedToolResults: plan.clearedToolResults,
      notesBy: written.notes !== undefined ? written.model : "extractive",
      loopGuard: on.guardState(),
      ...(typeof input.meta?.journalId === "string" ? { journalId: input.meta.journalId } : {}),
    };
    await input.append([entry], { final: true });
    on.compacted(tokensAfter);
    await input.notify?.(compactionLine(inputTokens, tokensAfter));
    return next;
  }
}
