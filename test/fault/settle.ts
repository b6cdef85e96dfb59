import type { GatewayProcess } from "../e2e/harness.js";

/** How long a restarted gateway may take to finish what it owes before the scenario audits anyway. */
export const SETTLE_DEADLINE_MS = 30_000;

/**
 * Waits until the gateway has no open journal record left (`GET /api/status` → `openJournalRecords: 0`): every
 * accepted message has ended. Checks once at once, then again on every `turn-end` and `notice` event of any
 * session (which is when a record can end), until the deadline. Resolves with the last count seen, so a
 * wedged gateway shows up as a number in the failure and as lost messages in the audit, not as a hung test.
 */
export async function settle(gw: GatewayProcess, deadlineMs = SETTLE_DEADLINE_MS): Promise<number> {
  const events = await gw.events();
  const started = Date.now();
  let seen = 0;
  try {
    for (;;) {
      const mark = events.events.length;
      const status = await gw
        .call<{ openJournalRecords?: number }>("GET", "/api/status")
        .catch(() => undefined);
      const open = status?.body.openJournalRecords;
      if (typeof open === "number") {
        seen = open;
        if (open === 0) return 0;
      }
      const left = deadlineMs - (Date.now() - started);
      if (left <= 0 || events.isClosed) return seen;
      const next = await events
        .waitFor(
          (e) => events.events.indexOf(e) >= mark && (e.type === "turn-end" || e.type === "notice"),
          "a turn end",
          left,
        )
        .catch(() => undefined);
      if (!next) return seen;
    }
  } finally {
    events.close();
  }
}
