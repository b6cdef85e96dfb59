import { formatAge } from "../core/format.js";
import type { SessionEntry } from "../sessions/types.js";
import type { ConfigStatus } from "./config-state.js";
import type { ModelSnapshot } from "./model-probe.js";
import type { Undeliverable } from "./outbox.js";
import type { SessionPhase } from "./session/phase.js";

/**
 * The pieces of `/status` that `clawdis status` shares: the config line and the transport lines. Pure. The chat
 * message itself is composed in status-text.ts.
 */

/** One transport as the plugin host reports it (`PluginStatus`, or the same fields from `GET /api/status`). */
export interface TransportView {
  id: string;
  state: string;
  detail?: string;
  /** The error that took it down last (it names the fix). */
  lastError?: string;
}

/** Who reads `/status`: a direct chat (or the CLI) sees local paths and the endpoint URL; a group does not. */
export type StatusAudience = "direct" | "group";

/** What `/status` shows; gathered by the gateway without a model call and without waiting for a turn. */
export interface StatusInput {
  version: string;
  now: number;
  startedAt: number;
  /** The in-process restart this gateway was started by: when and why. */
  restarted?: { at: number; reason: string };
  audience: StatusAudience;
  sessionKey: string;
  entry: SessionEntry | undefined;
  storePath: string;
  contextWindow: number;
  transports: TransportView[];
  /** Replies waiting for a transport that is down (see runtime/outbox.ts). */
  parked?: { channel: string; count: number; oldestMs: number; reported: boolean }[];
  /** Tool calls of this session that wait for the person's approval (docs/tools.md), oldest first. */
  approvals?: { what: string; ageMs: number }[];
  /** This session's running background jobs (docs/tools.md, Background jobs), oldest first. */
  jobs?: { id: string; command: string; ageMs: number }[];
  /** Deliveries a chat refused for good (`Outbox.undeliverable`), newest last. */
  undelivered?: readonly Undeliverable[];
  model: ModelSnapshot;
  /** The phase of the session while it is loaded (session/phase.ts); undefined: not loaded. */
  phase?: SessionPhase | undefined;
  busy: boolean;
  waiting: number;
  /** The config file: an edit that did not take is shown until a good save. */
  config?: ConfigStatus;
}

/**
 * The line about the config file, when its last edit did not take; else undefined. `group`: without the path.
 * Pure.
 */
export function configStatusLine(
  config: ConfigStatus | undefined,
  audience: StatusAudience = "direct",
): string | undefined {
  if (config?.rejected) {
    return `config: last edit rejected ${formatAge(config.rejected.ageMs)} ago: ${config.rejected.summary}; running on the last good config until a good save`;
  }
  if (config?.deleted) {
    const file = audience === "group" ? "the config file" : config.path;
    return `config: ${file} was deleted ${formatAge(config.deleted.ageMs)} ago; running on the last good config`;
  }
  return undefined;
}

/** The host's own words for a plugin on its way down or waiting to restart (see plugin-host.ts). */
const RESTARTING = /^restarting in /;

/**
 * Why a transport is in its state, and what to do, in one short piece; "" when there is nothing to add. A plugin
 * the host took down says its error (which names the fix), plus when it restarts; the host's "failed; stopping
 * it" and "not restarted" add nothing to that. Anything else says its own detail (a running transport's health,
 * which is the truth even when an older error is still on record). Pure.
 */
export function transportWhy(t: TransportView): string {
  const detail = t.detail ?? "";
  if (t.state !== "down" || t.lastError === undefined || !isHostDownDetail(detail)) return detail;
  return RESTARTING.test(detail) ? `${t.lastError} · ${detail}` : t.lastError;
}

/** A detail the plugin host itself set on a failed plugin (its error says more). */
function isHostDownDetail(detail: string): boolean {
  return (
    detail === "" ||
    detail.startsWith("failed; stopping it") ||
    detail.startsWith("not restarted") ||
    RESTARTING.test(detail)
  );
}

/** `telegram ok: @bot; long polling; last poll 2s ago`, `whatsapp down: not linked — …`. One line. Pure. */
export function transportLine(t: TransportView): string {
  const why = transportWhy(t);
  return `${t.id} ${t.state}${why.length > 0 ? `: ${why}` : ""}`;
}
