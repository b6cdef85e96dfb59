import type { Clock } from "../core/clock.js";
import type { Logger } from "../core/logger.js";
import type { CleanupLimits } from "../sessions/plan-cleanup.js";
import { type CleanupAction, type CleanupReport, runCleanup } from "../sessions/session-cleanup.js";
import type { SessionStore } from "../sessions/store.js";

/** `inbound.reply.session.maintenance` as the gateway reads it. */
export interface MaintenanceConfig extends CleanupLimits {
  mode: "warn" | "enforce";
}

export interface SessionUpkeepDeps {
  store: SessionStore;
  clock: Clock;
  logger: Logger;
  /** Read at each use (a config reload applies at the next pass): absent means no upkeep. */
  maintenance: () => MaintenanceConfig | undefined;
  primaryKey: () => string;
  inUse: (key: string) => boolean;
}

/**
 * The limits of a cleanup: `maintenance`'s, else the schema's defaults (config-schema.ts maintenanceSchema, repeated
 * here so that this module does not load the schema: session-upkeep.test.ts compares them).
 */
export function configuredLimits(maintenance: MaintenanceConfig | undefined): CleanupLimits {
  if (!maintenance) return { ...DEFAULT_LIMITS };
  const { mode: _mode, ...limits } = maintenance;
  return limits;
}

export const DEFAULT_LIMITS: Readonly<CleanupLimits> = { pruneAfterDays: 30, maxEntries: 500 };

/** How often the gateway's upkeep runs after the pass at start. */
export const UPKEEP_EVERY_MS = 24 * 60 * 60 * 1000;

/**
 * Session upkeep in the running gateway (docs/sessions.md): one pass at start and one a day. `warn` logs what a
 * cleanup would prune (nothing changes); `enforce` prunes it to the archive. `cleanup` is also what
 * `POST /api/sessions/cleanup` (`clawdis sessions cleanup`) runs, so that one process decides what is in use.
 * Passes never overlap: one asked for while another runs waits for it.
 */
export class SessionUpkeep {
  private timer: unknown;
  private running: Promise<unknown> = Promise.resolve();
  private stopped = false;

  constructor(private readonly deps: SessionUpkeepDeps) {}

  /** The pass at start (in the background: never in the way of the start) and the daily timer. */
  start(): void {
    this.schedule(0);
  }

  stop(): Promise<unknown> {
    this.stopped = true;
    if (this.timer !== undefined) this.deps.clock.clearTimeout(this.timer);
    return this.running;
  }

  /** A cleanup with the configured limits (the schema's defaults when `maintenance` is absent). */
  cleanup(action: CleanupAction, limits: CleanupLimits): Promise<CleanupReport> {
    const run = this.running.then(() =>
      runCleanup(
        {
          store: this.deps.store,
          primaryKey: this.deps.primaryKey(),
          limits,
          now: this.deps.clock.now(),
          inUse: this.deps.inUse,
          logger: this.deps.logger,
        },
        action,
      ),
    );
    this.running = run.catch(() => undefined);
    return run;
  }

  private schedule(ms: number): void {
    if (this.stopped) return;
    this.timer = this.deps.clock.setTimeout(() => {
      void this.pass().finally(() => this.schedule(UPKEEP_EVERY_MS));
    }, ms);
  }

  private async pass(): Promise<void> {
    const maintenance = this.deps.maintenance();
    if (!maintenance || this.stopped) return;
    const { mode } = maintenance;
    const limits = configuredLimits(maintenance);
    try {
      const report = await this.cleanup(mode === "enforce" ? "archive" : "dry-run", limits);
      if (mode === "warn" && (report.pruned.length > 0 || report.unmet.length > 0)) {
        this.deps.logger.warn(
          "session upkeep (maintenance.mode warn): `clawdis sessions cleanup` would prune sessions; nothing was changed",
          {
            count: report.pruned.length,
            keys: report.pruned.map((p) => p.key).join(", "),
            unmet: report.unmet.join(", "),
          },
        );
      } else if (mode === "enforce" && report.pruned.length > 0) {
        this.deps.logger.info("session upkeep pruned sessions to the archive", {
          count: report.pruned.filter((p) => p.done === "archived").length,
          archive: report.archiveDir,
        });
      }
    } catch (error) {
      this.deps.logger.warn("session upkeep failed", { error: String(error) });
    }
  }
}
