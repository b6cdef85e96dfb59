import { type Clock, systemClock } from "../core/clock.js";
import { loadConfigCached } from "../core/config-cache.js";
import type { LoadedConfig } from "../core/config-file.js";
import type { ConfigSectionsSource } from "../core/config-sections.js";
import { type ClawdisError, describeError, isClawdisError } from "../core/errors.js";
import { formatAge } from "../core/format.js";
import { noModelHint } from "../core/no-model-hint.js";
import { defaultStorePath, resolveConfigPath } from "../core/paths.js";
import { readConfigStatus } from "../runtime/config-state.js";
import { modelSetup } from "../runtime/model-source.js";
import { configStatusLine, transportWhy } from "../runtime/status-report.js";
import { readStoreFile } from "../sessions/store-read.js";
import type { SessionMap } from "../sessions/types.js";
import { renderTable } from "./format-table.js";
import { type GatewayState, probeGateway } from "./gateway-client.js";
import { type CliIO, EXIT } from "./io.js";
import { buildSessionsReport, type SessionKind } from "./sessions-report.js";

export interface StatusReport {
  path: string;
  /** The config file read; null when there is none (every default). */
  config: string | null;
  /** The config file does not load (a running gateway keeps its last good config); the first line of why. */
  configError?: string;
  /** The model the running gateway uses, or the one configured; null when none is known. */
  model: string | null;
  /** When no model is configured: what to do, line by line (the file to edit and an example). */
  setup?: string[];
  /** Usable sessions in the store; null when the store does not parse. */
  count: number | null;
  /** Present only when the store does not parse. */
  storeError?: string;
  recent: { key: string; kind: SessionKind; sessionId: string; updatedAt: number; ageMs: number }[];
  gateway: GatewayState;
}

/**
 * `clawdis status [--json]`: store path, session count, the five most recent sessions, and what the running
 * gateway says about its transports (and an edit of the config it did not take). Exit 0; 1 when the store does
 * not parse (everything else is still shown). A config that does not load is exit 2: thrown for the CLI to print
 * when no gateway runs; with one running (on its last good config), its status is shown too, the store being the
 * one it uses, and the error goes to stderr. `sections`: the built-in plugins' config sections (validated with
 * the core's keys; plugins of `plugins.load` are not loaded, their sections are left unchecked), through the config
 * cache of `fingerprint` (core/config-cache.ts): with an unchanged config it loads neither zod nor JSON5.
 */
export async function runStatus(
  opts: { json?: boolean },
  io: CliIO,
  clock: Clock = systemClock,
  sections?: ConfigSectionsSource,
  fingerprint?: string,
): Promise<number> {
  let loaded: LoadedConfig | undefined;
  let configError: ClawdisError | undefined;
  try {
    loaded = await loadConfigCached(io.env, sections, fingerprint);
  } catch (error) {
    if (!isClawdisError(error) || error.exitCode !== EXIT.usage) throw error;
    configError = error;
  }
  // With a config that does not load, the gateway is found through the state directory (its lock, gateway.json).
  const gateway = await probeGateway(
    loaded?.config ?? (await import("../core/config.js")).defaultConfig(),
    io.env,
  );
  const running = gateway.running && gateway.error === undefined;
  if (configError && !running) throw configError;
  const gatewayStore = running ? gateway.storePath : undefined;
  const storePath =
    loaded?.storePath ?? (typeof gatewayStore === "string" ? gatewayStore : defaultStorePath(io.env));
  const store = await readStoreSummary(storePath);
  const gatewayModel = running
    ? (gateway.model as { configured?: boolean; name?: string } | undefined)
    : undefined;
  const configFile = loaded?.path ?? resolveConfigPath(io.env).path;
  const setup = loaded ? modelSetup(loaded.config.inbound.reply.agent, io.env) : undefined;
  const noModel = gatewayModel ? gatewayModel.configured === false : setup?.state === "missing";
  const report: StatusReport = {
    path: storePath,
    config: loaded ? (loaded.exists ? loaded.path : null) : configFile,
    ...(configError ? { configError: configError.message.split("\n")[0] ?? "" } : {}),
    model: gatewayModel?.name ?? (setup?.state === "named" ? setup.name : null),
    ...(noModel ? { setup: noModelHint(configFile) } : {}),
    count: store.map ? Object.keys(store.map).length : null,
    ...(store.error !== undefined ? { storeError: store.error } : {}),
    recent: buildSessionsReport(store.map ?? {}, storePath, clock.now(), null)
      .sessions.slice(0, 5)
      .map(({ key, kind, sessionId, updatedAt, ageMs }) => ({ key, kind, sessionId, updatedAt, ageMs })),
    gateway,
  };
  if (configError) io.stderr(`clawdis: ${configError.message}\n`);
  io.stdout(opts.json ? `${JSON.stringify(report, null, 2)}\n` : `${humanStatus(report, clock.now())}\n`);
  if (configError) return EXIT.usage;
  return store.error === undefined ? EXIT.ok : EXIT.failed;
}

async function readStoreSummary(path: string): Promise<{ map?: SessionMap; error?: string }> {
  try {
    const read = await readStoreFile(path);
    if (!read.exists) return { map: {} };
    if (!read.parsed.ok) return { error: `does not parse: ${read.parsed.reason}` };
    return { map: read.parsed.map };
  } catch (error) {
    return { error: `cannot be read: ${describeError(error)}` };
  }
}

function humanStatus(report: StatusReport, now: number): string {
  const lines: string[] = [];
  lines.push(`config: ${report.config ?? "none (every default applies)"}`);
  if (report.configError !== undefined) {
    lines.push("config: does not load (see above); the running gateway keeps its last good config");
  }
  if (report.setup) lines.push(...report.setup.map((line) => `model: ${line}`));
  else lines.push(`model: ${report.model ?? "the endpoint's only model (found when the gateway starts)"}`);
  if (report.storeError !== undefined) {
    lines.push(`store: ${report.path} ${report.storeError}`);
  } else {
    lines.push(`store: ${report.path} (${report.count} session${report.count === 1 ? "" : "s"})`);
  }
  if (report.recent.length > 0) {
    lines.push("recent:");
    const rows = report.recent.map((r) => [r.key, formatAge(r.ageMs), r.kind]);
    lines.push(
      ...renderTable(["KEY", "AGE", "KIND"], rows)
        .split("\n")
        .map((line) => `  ${line}`),
    );
  }
  const gateway = report.gateway;
  if (!gateway.running) {
    lines.push(`gateway: not running (nothing answers at ${gateway.url})`);
    return lines.join("\n");
  }
  if (gateway.error !== undefined) {
    lines.push(`gateway: something runs at ${gateway.url}, but ${gateway.error}`);
    return lines.join("\n");
  }
  const uptime = typeof gateway.uptimeMs === "number" ? `, up ${formatAge(gateway.uptimeMs)}` : "";
  const pid = typeof gateway.pid === "number" ? `, pid ${gateway.pid}` : "";
  lines.push(`gateway: running at ${gateway.url}${pid}${uptime}`);
  // An in-process restart (a config change that needs the whole gateway) since the process started.
  const restarted = gateway.restarted as { at?: unknown; reason?: unknown } | null | undefined;
  if (restarted && typeof restarted.at === "number" && typeof restarted.reason === "string") {
    lines.push(`gateway: restarted ${formatAge(Math.max(0, now - restarted.at))} ago: ${restarted.reason}`);
  }
  // Tool calls that wait for a person's approval, with their age.
  const approvals = Array.isArray(gateway.approvals) ? gateway.approvals : [];
  if (approvals.length > 0) {
    lines.push("waiting for approval:");
    for (const a of approvals as { sessionKey?: unknown; what?: unknown; ageMs?: unknown }[]) {
      const age = typeof a.ageMs === "number" ? formatAge(a.ageMs) : "?";
      lines.push(`  ${String(a.sessionKey)} · ${age} · ${String(a.what).replace(/\n/g, " ")}`);
    }
  }
  // An edit of the config file that the running gateway did not take (refused, or the file deleted).
  const config = configStatusLine(readConfigStatus(gateway.config));
  if (config) lines.push(config);
  const transports = Array.isArray(gateway.transports) ? gateway.transports : [];
  if (transports.length === 0) {
    lines.push("transports: none");
  } else {
    lines.push("transports:");
    // A transport that is down says why and what to do (e.g. "Telegram says 401: Unauthorized — check …").
    const rows = transports.map((t) => [
      String(t.id),
      String(t.state),
      transportWhy({
        id: String(t.id),
        state: String(t.state),
        ...(typeof t.detail === "string" ? { detail: t.detail } : {}),
        ...(typeof t.lastError === "string" ? { lastError: t.lastError } : {}),
      }),
    ]);
    lines.push(
      ...renderTable(["ID", "STATE", "DETAIL"], rows)
        .split("\n")
        .map((line) => `  ${line}`),
    );
  }
  return lines.join("\n");
}
