import type { ConfigSectionsSource } from "../core/config-sections.js";
import { ClawdisError } from "../core/errors.js";
import { formatAge } from "../core/format.js";
import { createLogger } from "../core/logger.js";
import { sessionKeyFor } from "../routing/session-key.js";
import { configuredLimits } from "../runtime/session-upkeep.js";
import { describeReason } from "../sessions/plan-cleanup.js";
import { type CleanupAction, type CleanupReport, runCleanup } from "../sessions/session-cleanup.js";
import { SessionStore } from "../sessions/store.js";
import { connectGateway } from "./gateway-client.js";
import { type CliIO, EXIT } from "./io.js";
import { localRequest } from "./local-request.js";

export interface CleanupOptions {
  dryRun?: boolean;
  json?: boolean;
  purge?: boolean;
}

/**
 * `clawdis sessions cleanup [--dry-run] [--json] [--purge]` (docs/cli.md): prunes sessions by
 * `inbound.reply.session.maintenance`'s limits (its defaults when it is not configured, whatever its `mode`).
 * Through the running gateway of this state directory when one answers (`POST /api/sessions/cleanup`: it knows
 * which sessions are in use and leaves them alone), else on the store and its files directly (the store's locked
 * update). Pruned entries' files go to `<store dir>/archive/`; `--purge` deletes them instead.
 */
export async function runSessionsCleanup(
  opts: CleanupOptions,
  io: CliIO,
  sections?: ConfigSectionsSource,
): Promise<number> {
  if (opts.dryRun && opts.purge) {
    io.stderr("clawdis sessions cleanup: --dry-run and --purge do not go together\n");
    return EXIT.usage;
  }
  const action: CleanupAction = opts.dryRun ? "dry-run" : opts.purge ? "purge" : "archive";
  const { loadConfig } = await import("../core/config.js");
  const { config, storePath } = loadConfig(io.env, sections ? await sections(io.env) : undefined);
  const gateway = await connectGateway(config, io.env);
  let report: CleanupReport;
  if (gateway) {
    const answer = await localRequest(`${gateway.url}/api/sessions/cleanup`, {
      method: "POST",
      headers: { authorization: `Bearer ${gateway.token}`, "content-type": "application/json" },
      body: JSON.stringify({ action }),
    });
    const body = jsonObjectOf(answer.text);
    if (answer.status !== 200 || !body) {
      const message = typeof body?.message === "string" ? `: ${body.message}` : "";
      throw new ClawdisError("GATEWAY_UNREACHABLE", `the gateway answered HTTP ${answer.status}${message}`);
    }
    report = body as unknown as CleanupReport;
  } else {
    const logger = createLogger({
      sink: (line) => {
        if (line.level === "warn" || line.level === "error")
          io.stderr(`clawdis sessions cleanup: ${line.message}\n`);
      },
    });
    const store = new SessionStore({ path: storePath, logger });
    report = await runCleanup(
      {
        store,
        primaryKey: sessionKeyFor({ chatType: "direct", chatId: "" }, config.inbound.reply.session),
        limits: configuredLimits(config.inbound.reply.session.maintenance),
        now: Date.now(),
        // No gateway runs: no session is in use.
        inUse: () => false,
        logger,
      },
      action,
    );
  }
  io.stdout(opts.json ? `${JSON.stringify(report, null, 2)}\n` : humanCleanup(report, Date.now()));
  return EXIT.ok;
}

/** The report in words: one line per pruned entry, then the totals. */
export function humanCleanup(report: CleanupReport, now: number): string {
  const verb = { "dry-run": "would prune", archive: "pruned", purge: "pruned and deleted" }[report.action];
  const lines: string[] = [];
  if (report.pruned.length === 0) lines.push(`nothing to prune (store ${report.path})`);
  for (const row of report.pruned) {
    const age =
      row.lastActiveAt === null ? "never active" : `last active ${formatAge(now - row.lastActiveAt)} ago`;
    const done =
      row.done === "skipped"
        ? "skipped: changed or in use meanwhile"
        : describeReason(row.reason, report.limits);
    lines.push(`${verb} ${row.key} (session ${row.sessionId}, ${age}, ${mb(row.bytes)}): ${done}`);
  }
  lines.push(
    `entries ${report.entries.before} → ${report.entries.after}, files ${mb(report.bytes.before)} → ${mb(report.bytes.after)}`,
  );
  if (report.action === "archive" && report.pruned.length > 0) lines.push(`archived in ${report.archiveDir}`);
  for (const limit of report.unmet)
    lines.push(
      `still over ${limit === "max-entries" ? "maxEntries" : "maxDiskMb"}: only sessions that are never pruned are left over it`,
    );
  return `${lines.join("\n")}\n`;
}

function mb(bytes: number): string {
  return `${(bytes / (1024 * 1024)).toFixed(1)} MB`;
}

/** An answer's body as JSON (an object, as the gateway answers), or undefined when it is not JSON. */
function jsonObjectOf(text: string): Record<string, unknown> | undefined {
  try {
    return JSON.parse(text) as Record<string, unknown>;
  } catch {
    return undefined;
  }
}
