import type { Clock } from "../core/clock.js";
import type { StoredChatMessage } from "../sessions/types.js";
import type { LlmClient } from "./llm-client.js";
import { Watchdog } from "./watchdog.js";

/** At most this many characters of the dropped part are shown to the notes model (the newest ones). */
export const NOTES_INPUT_MAX_CHARS = 48_000;
export const NOTES_MAX_OUTPUT_TOKENS = 1024;

const NOTES_PROMPT =
  "You write notes that replace the earlier part of a chat between a person and their assistant, which no longer " +
  "fits the context window. Keep what the assistant must remember: facts about the person, decisions, open tasks, " +
  "what was tried and its results, file names and values. Plain text, short lines, no preamble.";

/**
 * Step 3 of compaction: one best-effort call per model (`compactionModel`, then `fallbackModel`), each bounded by
 * `sidecarSeconds` on the injected clock and aborted with the turn. Resolves with the notes, or undefined when
 * every model failed or answered nothing (then the extractive reduction stands). Never throws for expected
 * failures.
 */
export async function writeCompactionNotes(input: {
  dropped: StoredChatMessage[];
  models: string[];
  llm: Pick<LlmClient, "stream">;
  clock: Clock;
  signal: AbortSignal;
  sidecarSeconds: number;
}): Promise<{ notes: string; model: string } | { notes: undefined; errors: string[] }> {
  const errors: string[] = [];
  const transcript = renderDropped(input.dropped);
  if (transcript.length === 0) return { notes: undefined, errors: ["nothing to summarize"] };
  for (const model of [...new Set(input.models)]) {
    if (input.signal.aborted) break;
    const watchdog = new Watchdog(input.clock, input.signal);
    watchdog.arm("sidecar", input.sidecarSeconds);
    try {
      const result = await input.llm.stream({
        model,
        messages: [
          { role: "system", content: NOTES_PROMPT },
          { role: "user", content: transcript },
        ],
        maxOutputTokens: NOTES_MAX_OUTPUT_TOKENS,
        signal: watchdog.signal,
      });
      const fired = watchdog.fired();
      if (fired) errors.push(`${model}: ${fired.message}`);
      else if (!result.ok) errors.push(`${model}: ${result.error}`);
      else if (result.text.trim().length === 0) errors.push(`${model}: answered nothing`);
      else return { notes: result.text.trim(), model };
    } finally {
      watchdog.dispose();
    }
  }
  return { notes: undefined, errors };
}

/** The dropped messages as plain text, newest kept when too long. */
export function renderDropped(dropped: StoredChatMessage[]): string {
  const lines = dropped.map((m) => {
    const calls = (m.tool_calls ?? [])
      .map((c) => ` [calls ${c.function.name} ${c.function.arguments}]`)
      .join("");
    return `${m.role}: ${m.content ?? ""}${calls}`;
  });
  const text = lines.join("\n");
  return text.length > NOTES_INPUT_MAX_CHARS ? text.slice(text.length - NOTES_INPUT_MAX_CHARS) : text;
}
