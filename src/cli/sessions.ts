import { existsSync } from "node:fs";
import { stat } from "node:fs/promises";
import { join } from "node:path";
import { type Clock, systemClock } from "../core/clock.js";
import type { ConfigSectionsSource } from "../core/config-sections.js";
import { ClawdisError } from "../core/errors.js";
import { formatAge } from "../core/format.js";
import { defaultStorePath, type Env, expandHome, resolveConfigPath } from "../core/paths.js";
import { quoteId } from "../sessions/session-id.js";
import { readStoreFile } from "../sessions/store-read.js";
import type { SessionMap } from "../sessions/types.js";
import { formatContext, renderTable, renderTsv } from "./format-table.js";
import { type CliIO, EXIT } from "./io.js";
import { livePhases } from "./sessions-live.js";
import { buildSessionsReport, parseActiveMinutes, type SessionsReport } from "./sessions-report.js";

export interface SessionsOptions {
  json?: boolean;
  active?: string;
  store?: string;
}

/**
 * `clawdis sessions [--json] [--active <minutes>] [--store <path>]` (SPEC section 5).
 * With `--json`, a session the running gateway holds loaded has its `phase` (asked over `GET /api/sessions` of
 * the gateway that owns this state directory; no gateway, no `phase` fields, nothing asked).
 * Read-only and fast: it never takes the lock and never changes the store (a store that does not parse is
 * reported, exit 1; the gateway sets it aside on its next access). With `--store` the config is not needed
 * (only consulted, best effort, for the context window in the table). Imports nothing heavy: the config
 * loader (zod, json5) and `sections` (the built-in plugins' config sections, without their runtime) are loaded only
 * when a config file exists (without one, the defaults are known: `withoutConfigFile`); plugins of `plugins.load`
 * never are (their sections are left unchecked).
 */
export async function runSessions(
  opts: SessionsOptions,
  io: CliIO,
  clock: Clock = systemClock,
  sections?: ConfigSectionsSource,
  fingerprint?: string,
): Promise<number> {
  const active = parseActiveMinutes(opts.active);
  if (active instanceof Error) {
    io.stderr(`clawdis sessions: ${active.message}\n`);
    return EXIT.usage;
  }

  let storePath: string;
  let contextWindow: number | undefined;
  const defaults = withoutConfigFile(io.env);
  if (opts.store !== undefined) {
    storePath = await resolveStoreArgument(opts.store, io);
    if (!opts.json) {
      contextWindow = defaults
        ? defaults.contextWindow
        : await configuredWindow(io, sections, fingerprint).catch(() => undefined);
    }
  } else if (defaults) {
    storePath = defaults.storePath;
    contextWindow = defaults.contextWindow;
  } else {
    // A config that does not load ends the command with exit 2 (ClawdisError CONFIG_*, printed by the CLI).
    const { loadConfigCached } = await import("../core/config-cache.js");
    const loaded = await loadConfigCached(io.env, sections, fingerprint);
    storePath = loaded.storePath;
    contextWindow = loaded.config.inbound.reply.agent.contextTokens;
  }

  const map = await readStore(storePath, io, opts.store !== undefined);
  if (opts.json) {
    // The phases of loaded sessions come from the running gateway, if one runs on this state directory.
    const live = await livePhases(io.env, storePath);
    if (live && "none" in live) io.stderr(`clawdis sessions: ${live.none}; listed without phases\n`);
    const phaseOf = live && "phases" in live ? (key: string) => live.phases.get(key) : undefined;
    const report = buildSessionsReport(map, storePath, clock.now(), active, phaseOf);
    io.stdout(`${JSON.stringify(report, null, 2)}\n`);
    return EXIT.ok;
  }
  const report = buildSessionsReport(map, storePath, clock.now(), active);
  io.stdout(`${humanReport(report, contextWindow, io.isTTY)}\n`);
  return EXIT.ok;
}

/**
 * The default of `inbound.reply.agent.contextTokens` (core/config-schema.ts), known here so that listing sessions
 * without a config file does not load the config schema (zod). sessions.test.ts checks it against the schema.
 */
export const DEFAULT_CONTEXT_WINDOW = 128_000;

/**
 * What the config says when there is no config file: the default store path and context window, exactly what
 * `loadConfig` gives then (sessions.test.ts compares the two), without loading the config module, zod or JSON5.
 * Undefined when a config file exists, or when `CLAWDIS_CONFIG_PATH` names one (missing or not: `loadConfig`
 * decides, and a missing named file is its error).
 */
export function withoutConfigFile(env: Env): { storePath: string; contextWindow: number } | undefined {
  const { path, explicit } = resolveConfigPath(env);
  if (explicit || existsSync(path)) return undefined;
  return { storePath: defaultStorePath(env), contextWindow: DEFAULT_CONTEXT_WINDOW };
}

/** `--store` takes the file, or the directory holding `sessions.json`; `~` is expanded. */
async function resolveStoreArgument(value: string, io: CliIO): Promise<string> {
  const path = expandHome(value, io.env);
  const info = await stat(path).catch(() => undefined);
  return info?.isDirectory() ? join(path, "sessions.json") : path;
}

async function configuredWindow(
  io: CliIO,
  sections: ConfigSectionsSource | undefined,
  fingerprint: string | undefined,
): Promise<number> {
  const { loadConfigCached } = await import("../core/config-cache.js");
  return (await loadConfigCached(io.env, sections, fingerprint)).config.inbound.reply.agent.contextTokens;
}

/** The usable entries of the store; unusable ones are named on stderr (stdout stays clean for --json). */
export async function readStore(path: string, io: CliIO, explicit: boolean): Promise<SessionMap> {
  const read = await readStoreFile(path);
  if (!read.exists) {
    if (explicit) io.stderr(`clawdis sessions: ${path} does not exist (no sessions)\n`);
    return {};
  }
  if (!read.parsed.ok) {
    throw new ClawdisError(
      "STORE_CORRUPT",
      `the session store ${path} does not parse: ${read.parsed.reason}. The gateway sets it aside as sessions.json.bad-<time> on its next access and carries on with its last good copy; \`clawdis doctor --fix\` does the same now`,
    );
  }
  for (const problem of read.parsed.problems) {
    io.stderr(`clawdis sessions: entry ${quoteId(problem.key)}: ${problem.reason}\n`);
  }
  return read.parsed.map;
}

function humanReport(report: SessionsReport, contextWindow: number | undefined, tty: boolean): string {
  const within = report.activeMinutes === null ? "" : ` active in the last ${report.activeMinutes} min`;
  if (report.count === 0) return `no sessions${within} (store ${report.path})`;
  const rows = report.sessions.map((row) => [
    row.kind,
    row.key,
    formatAge(row.ageMs),
    typeof row.model === "string" ? row.model : "-",
    formatContext(
      typeof row.contextTokens === "number" ? row.contextTokens : undefined,
      contextWindow,
      row.contextEstimated === true,
    ),
    row.sessionId,
    // A title the gateway wrote is one line; a hand-written one is made one.
    typeof row.title === "string" && row.title.trim() !== "" ? row.title.replace(/\s+/g, " ").trim() : "-",
  ]);
  if (!tty) return renderTsv(rows);
  const title = `${report.count} session${report.count === 1 ? "" : "s"}${within} in ${report.path}`;
  return `${title}\n\n${renderTable(["KIND", "KEY", "AGE", "MODEL", "CONTEXT", "SESSION ID", "TITLE"], rows)}`;
}
