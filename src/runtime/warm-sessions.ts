import { describeError } from "../core/errors.js";
import type { Logger } from "../core/logger.js";
import { isValidSessionId } from "../sessions/session-id.js";
import type { SessionStore } from "../sessions/store.js";
import type { SessionRegistry } from "./session-registry.js";
import { readResumeCached } from "./tail-cache.js";

export interface WarmSessionsDeps {
  store: Pick<SessionStore, "get" | "transcriptPath">;
  sessions: Pick<SessionRegistry, "touch">;
  /** The resume read budget (`resumeBudgetBytes(contextTokens)`), as the turns use it: the tail is then theirs. */
  budgetBytes: number;
  logger: Pick<Logger, "info" | "warn">;
}

/**
 * Loads sessions back into the registry before traffic resumes (after an in-process restart): each key's entry is
 * read and its transcript tail resumed into the session's warm slot, exactly as its next turn would read it, so
 * that turn costs a `stat`. A key without an entry, or one that cannot be read, is skipped (it loads when used).
 * Returns how many were warmed.
 */
export async function warmSessions(deps: WarmSessionsDeps, keys: string[]): Promise<number> {
  let warmed = 0;
  for (const key of keys) {
    try {
      const entry = await deps.store.get(key);
      if (!entry || !isValidSessionId(entry.sessionId)) continue;
      const session = deps.sessions.touch(key);
      await readResumeCached(session, deps.store.transcriptPath(entry.sessionId), deps.budgetBytes, {
        keep: true,
      });
      warmed++;
    } catch (error) {
      deps.logger.warn("could not load a session back after the restart; it loads when used", {
        sessionKey: key,
        error: describeError(error),
      });
    }
  }
  if (keys.length > 0) deps.logger.info("sessions loaded back after the restart", { count: warmed });
  return warmed;
}
