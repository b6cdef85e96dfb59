import { type FSWatcher, watch } from "node:fs";
import { join } from "node:path";
import type { E2eState, GatewayProcess } from "../e2e/harness.js";
import { deadline } from "./traffic.js";

/** How long a restarted gateway may take to finish what it owes before the scenario audits anyway. */
export const SETTLE_DEADLINE_MS = 30_000;
const RECHECK_MS = 100;

/**
 * Waits until the gateway has no open journal record left (`GET /api/status` → `openJournalRecords: 0`): every
 * accepted message has ended. Asks at once, then again whenever the journal directory changes (a record ending
 * is a write there), and, because the count drops only once that write is fsync'd (a moment after the change
 * event), again RECHECK_MS after the last answer: a condition wait, whose outcome never depends on the timing.
 * Resolves at 0 or at the deadline with the last count seen, so a wedged gateway shows up as a number in the
 * failure and as lost messages in the audit, not as a hung test.
 */
export async function settle(
  gw: GatewayProcess,
  state: E2eState,
  deadlineMs = SETTLE_DEADLINE_MS,
): Promise<number> {
  let wake: () => void = () => {};
  let changed = false;
  const onChange = () => {
    changed = true;
    wake();
  };
  let watcher: FSWatcher | undefined;
  try {
    watcher = watch(join(state.dir, "journal"), onChange);
  } catch {
    // No journal directory yet: nothing was ever accepted; the status below says so.
  }
  const timer = deadline(deadlineMs);
  let late = false;
  void timer.late.then(() => {
    late = true;
    wake();
  });
  void gw.exited.then(() => wake());
  let seen = -1;
  try {
    for (;;) {
      changed = false;
      const status = await gw
        .call<{ openJournalRecords?: number }>("GET", "/api/status")
        .catch(() => undefined);
      const open = status?.body.openJournalRecords;
      if (typeof open === "number") {
        seen = open;
        if (open === 0) return 0;
      }
      if (late || !gw.running) return seen;
      if (!changed) {
        await new Promise<void>((resolve) => {
          const recheck = setTimeout(resolve, RECHECK_MS);
          wake = () => {
            clearTimeout(recheck);
            resolve();
          };
        });
      }
    }
  } finally {
    timer.clear();
    watcher?.close();
  }
}
