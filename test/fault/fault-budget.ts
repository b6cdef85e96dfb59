/**
 * How much each scenario does: a bounded run that fits in `npm test` (about a minute or two on 2 cores), or a
 * longer soak with `CLAWDIS_SOAK=1` (`npm run soak`). Counts only: every wait inside a scenario is on an event.
 */
export const SOAK = process.env.CLAWDIS_SOAK === "1";

/** `quick` in a normal run, `soak` under CLAWDIS_SOAK=1. */
export function budget(quick: number, soak: number): number {
  return SOAK ? soak : quick;
}

/** A Vitest timeout for a scenario: generous, since it only turns a hang into a failure. */
export function scenarioTimeout(quickMs: number, soakMs: number): number {
  return SOAK ? soakMs : quickMs;
}

/**
 * The one deliberate delay of the suite: a scenario's chosen fault timing (kill N ms after an event, stay down
 * N ms before the restart, stall a process for N ms). Never used to wait for something to happen.
 */
export function faultDelay(ms: number): Promise<void> {
  return ms > 0 ? new Promise((resolve) => setTimeout(resolve, ms)) : Promise.resolve();
}
