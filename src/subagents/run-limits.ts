/**
 * How many sub-agent runs may be live at once (docs/tools.md, Sub-agents), and the tool error a spawn past a limit
 * gets (undefined: it may start). Pure.
 */

/** Live runs a session may have at once. */
export const MAX_RUNS_PER_SESSION = 3;
/** Live runs the gateway may have at once, all sessions together. */
export const MAX_RUNS_TOTAL = 8;

export function spawnRefusal(
  live: { inSession: number; total: number },
  limits = { perSession: MAX_RUNS_PER_SESSION, total: MAX_RUNS_TOTAL },
): string | undefined {
  if (live.inSession >= limits.perSession) {
    return `spawn_agent: this session already has ${live.inSession} sub-agents running (at most ${limits.perSession}); wait for one to end or cancel one`;
  }
  if (live.total >= limits.total) {
    return `spawn_agent: ${live.total} sub-agents are running in all (at most ${limits.total}); try again later`;
  }
  return undefined;
}
