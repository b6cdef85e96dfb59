import type { ClawdisConfig } from "../core/config.js";
import { configuredLimits } from "../runtime/session-upkeep.js";
import { describeReason } from "../sessions/plan-cleanup.js";
import { runCleanup } from "../sessions/session-cleanup.js";
import type { SessionStore } from "../sessions/store.js";
import type { DoctorFindings } from "./doctor-report.js";

/**
 * `clawdis doctor`'s look at session upkeep (docs/sessions.md, Upkeep): with `maintenance` configured, what
 * `clawdis sessions cleanup` would prune now (a dry run: nothing changes, `--fix` does not prune), as a note; with
 * none configured, nothing is said. `primaryKey` is the session never pruned.
 */
export async function checkUpkeep(
  config: ClawdisConfig,
  store: SessionStore,
  primaryKey: string,
  report: DoctorFindings,
): Promise<void> {
  const maintenance = config.inbound.reply.session.maintenance;
  if (!maintenance) return;
  const limits = configuredLimits(maintenance);
  const plan = await runCleanup(
    { store, primaryKey, limits, now: Date.now(), inUse: () => false, logger: silent },
    "dry-run",
  );
  if (plan.pruned.length === 0 && plan.unmet.length === 0) {
    report.ok(`session upkeep (maintenance.mode ${maintenance.mode}): nothing to prune`);
    return;
  }
  const who = plan.pruned.map((p) => `${p.key} (${describeReason(p.reason, limits)})`).join(", ");
  const what =
    maintenance.mode === "enforce"
      ? "the gateway prunes them at its start and once a day"
      : "`clawdis sessions cleanup` prunes them (maintenance.mode warn only reports)";
  if (plan.pruned.length > 0)
    report.note(
      `session upkeep: ${plan.pruned.length} session(s) to prune to sessions/archive/: ${who}; ${what}`,
    );
  for (const limit of plan.unmet)
    report.note(
      `session upkeep: still over ${limit === "max-entries" ? "maxEntries" : "maxDiskMb"} with only sessions that are never pruned`,
    );
}

const silent = {
  debug: () => {},
  info: () => {},
  warn: () => {},
  error: () => {},
  child: () => silent,
};
