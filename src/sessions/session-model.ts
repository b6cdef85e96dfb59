import type { SessionEntry } from "./types.js";

/**
 * A session's own model (`/model <name>`, docs/sessions.md): kept on its entry as `modelOverride`, used by its
 * turns instead of `inbound.reply.agent.model`, kept across `/new` like the other settings the person chose, and
 * removed by `/model default`. (`model` on the entry is another field: the model its last turn used.)
 */
export const MODEL_OVERRIDE_FIELD = "modelOverride";

/** The model the session's turns use: its override when it has one, else `configured`. Pure. */
export function sessionModel(
  entry: SessionEntry | undefined,
  configured: string | undefined,
): string | undefined {
  const own = entry?.[MODEL_OVERRIDE_FIELD];
  return typeof own === "string" && own.length > 0 ? own : configured;
}
