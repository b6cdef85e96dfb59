import { formatAge, formatTokens } from "../core/format.js";
import type { SessionEntry } from "../sessions/types.js";
import type { ConfigStatus } from "./config-state.js";
import type { ModelSnapshot } from "./model-probe.js";

/** What `/status` shows; gathered by the gateway without a model call and without waiting for a turn. */
export interface StatusInput {
  version: string;
  now: number;
  startedAt: number;
  sessionKey: string;
  entry: SessionEntry | undefined;
  storePath: string;
  contextWindow: number;
  transports: { id: string; state: string; detail?: string }[];
  /** Replies waiting for a transport that is down (see runtime/outbox.ts). */
  parked?: { channel: string; count: number; oldestMs: number; reported: boolean }[];
  model: ModelSnapshot;
  busy: boolean;
  waiting: number;
  /** The config file: an edit that did not take is shown until a good save. */
  config?: ConfigStatus;
}

/** The `/status` line about the config file, when its last edit did not take; else undefined. Pure. */
export function configStatusLine(config: ConfigStatus | undefined): string | undefined {
  if (config?.rejected) {
    return `config: last edit rejected ${formatAge(config.rejected.ageMs)} ago: ${config.rejected.summary}`;
  }
  if (config?.deleted) {
    return `config: ${config.path} was deleted ${formatAge(config.deleted.ageMs)} ago; running on the last good config`;
  }
  return undefined;
}

/** `/status`: one line per topic. Pure. */
export function formatStatus(input: StatusInput): string {
  const lines: string[] = [];
  lines.push(`clawdis ${input.version} · gateway up ${formatAge(input.now - input.startedAt)}`);
  const config = configStatusLine(input.config);
  if (config) lines.push(config);
  const transports = input.transports.map((t) => `${t.id} ${t.state}${t.detail ? ` (${t.detail})` : ""}`);
  lines.push(`Transports: ${transports.length > 0 ? transports.join(" · ") : "none"}`);
  for (const p of input.parked ?? []) {
    lines.push(
      `Waiting to send: ${p.count} ${p.count === 1 ? "reply" : "replies"} for ${p.channel}, the oldest for ${formatAge(p.oldestMs)} (sent when ${p.channel} is back)`,
    );
  }
  const m = input.model;
  if (!m.configured) {
    lines.push(
      `Model: not configured (set inbound.reply.agent.model in clawdis.json, or OPENAI_MODEL) · endpoint ${m.baseUrl} (from ${m.endpointSource ?? "config"})`,
    );
  } else {
    const reach =
      m.reachable === null
        ? "checking…"
        : m.reachable
          ? "reachable"
          : `unreachable${m.error ? `: ${m.error}` : ""}`;
    const age = m.checkedAt ? ` (checked ${formatAge(input.now - m.checkedAt)} ago)` : "";
    const sources = `model from ${m.source ?? "config"}, endpoint from ${m.endpointSource ?? "config"}`;
    lines.push(`Model: ${m.name} at ${m.baseUrl} — ${reach}${age} · ${sources}`);
  }
  const e = input.entry;
  if (!e) {
    lines.push(`Session: ${input.sessionKey} (no messages yet)`);
  } else {
    const used = e.contextTokens ?? 0;
    const pct = input.contextWindow > 0 ? ((used / input.contextWindow) * 100).toFixed(1) : "?";
    const est = e.contextEstimated ? " (estimated)" : "";
    lines.push(
      `Context: ${formatTokens(used)}/${formatTokens(input.contextWindow)} tokens (${pct}%)${est} · compactions ${e.compactionCount ?? 0}`,
    );
    const age = formatAge(input.now - (e.createdAt ?? e.updatedAt));
    lines.push(`Session: ${input.sessionKey} · id ${e.sessionId} · age ${age}`);
  }
  lines.push(`Store: ${input.storePath}`);
  lines.push(`Thinking: ${e?.thinkingLevel ?? "off"} · Verbose: ${e?.verboseLevel ?? "off"}`);
  lines.push(
    `Turn: ${input.busy ? "running" : "idle"}${input.waiting > 0 ? ` · ${input.waiting} waiting` : ""}`,
  );
  return lines.join("\n");
}
