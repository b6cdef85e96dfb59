import { formatAge, formatTokens } from "../core/format.js";
import { sessionModel } from "../sessions/session-model.js";
import { undeliverableLine } from "./outbox-status.js";
import type { SessionPhase } from "./session/phase.js";
import { configStatusLine, type StatusInput, transportLine } from "./status-report.js";

/**
 * The chat `/status` answer: short lines that fit a phone, one per transport, no nested parentheses. Pure.
 * Contract: a down transport says why and what to do; for a group (`audience: "group"`) no local file path and
 * no endpoint URL appear anywhere (the store line is left out, the config file and the endpoint are not named,
 * and anything else that looks like an absolute path is replaced by "…"); a direct chat gets them.
 */
export function statusText(input: StatusInput): string {
  const group = input.audience === "group";
  const lines: string[] = [];
  lines.push(`clawdis ${input.version} · gateway up ${formatAge(input.now - input.startedAt)}`);
  if (input.restarted) {
    lines.push(`restarted ${formatAge(input.now - input.restarted.at)} ago: ${input.restarted.reason}`);
  }
  const config = configStatusLine(input.config, input.audience);
  if (config) lines.push(config);
  if (input.transports.length === 0) lines.push("Transports: none");
  for (const t of input.transports) lines.push(transportLine(t));
  for (const p of input.parked ?? []) {
    lines.push(
      `Waiting to send: ${p.count} ${p.count === 1 ? "reply" : "replies"} for ${p.channel}, the oldest for ${formatAge(p.oldestMs)}; sent when ${p.channel} is back`,
    );
  }
  const undelivered = undeliverableLine(input.undelivered ?? [], input.now);
  if (undelivered) lines.push(undelivered);
  lines.push(modelLine(input));
  const e = input.entry;
  if (e) {
    const used = e.contextTokens ?? 0;
    const pct = input.contextWindow > 0 ? ((used / input.contextWindow) * 100).toFixed(1) : "?";
    const est = e.contextEstimated ? " (estimated)" : "";
    lines.push(
      `Context: ${formatTokens(used)}/${formatTokens(input.contextWindow)} tokens (${pct}%)${est} · compactions ${e.compactionCount ?? 0}`,
    );
  }
  lines.push(sessionLine(input));
  if (!group) lines.push(`Store: ${input.storePath}`);
  lines.push(`Thinking: ${e?.thinkingLevel ?? "off"} · Verbose: ${e?.verboseLevel ?? "off"}`);
  lines.push(
    `Turn: ${input.busy ? "running" : "idle"}${input.waiting > 0 ? ` · ${input.waiting} waiting` : ""}`,
  );
  for (const a of input.approvals ?? []) {
    lines.push(
      `Waiting for approval for ${formatAge(a.ageMs)}: ${a.what.replace(/\n/g, " ")} (/approve or /deny)`,
    );
  }
  for (const j of input.jobs ?? []) {
    lines.push(`Job ${j.id} running for ${formatAge(j.ageMs)}: ${oneLine(j.command)}`);
  }
  return (group ? lines.map((line) => hidePaths(hideEndpoint(line, input.model.baseUrl))) : lines).join("\n");
}

/**
 * The asker's session in one line: its key, its phase (`processing`, `ready`, …, or `not loaded`), then its id and
 * age, or that it has no messages yet: `Session: main · processing · id 3f… · age 2h`. Pure.
 */
export function sessionLine(input: Pick<StatusInput, "sessionKey" | "phase" | "entry" | "now">): string {
  const head = `Session: ${input.sessionKey} · ${phaseWords(input.phase)}`;
  const e = input.entry;
  if (!e) return `${head}, no messages yet`;
  return `${head} · id ${e.sessionId} · age ${formatAge(input.now - (e.createdAt ?? e.updatedAt))}`;
}

/** A loaded session's phase as it is named (session/phase.ts); a session not in memory is `not loaded`. */
function phaseWords(phase: SessionPhase | undefined): string {
  return phase ?? "not loaded";
}

/**
 * `Model: qwen at http://…/v1 — reachable, checked 5s ago · model from config, endpoint from config`; for a
 * group without the endpoint. Not configured: what to set, and that saving the file is enough.
 */
function modelLine(input: StatusInput): string {
  const m = input.model;
  const group = input.audience === "group";
  // The session's own model (`/model <name>`) comes first; the configured one is named beside it.
  const own = sessionModel(input.entry, undefined);
  if (!m.configured && !own) {
    const endpoint = group ? "" : ` · endpoint ${m.baseUrl}, from ${m.endpointSource ?? "config"}`;
    return `Model: not configured — set inbound.reply.agent.model in the config file and save it, or OPENAI_MODEL and restart${endpoint}`;
  }
  const reach =
    m.reachable === null
      ? "checking…"
      : m.reachable
        ? "reachable"
        : `unreachable${m.error ? `: ${m.error}` : ""}`;
  const age = m.checkedAt ? `, checked ${formatAge(input.now - m.checkedAt)} ago` : "";
  const at = group ? "" : ` at ${m.baseUrl}`;
  const sources = group
    ? `model from ${m.source ?? "config"}`
    : `model from ${m.source ?? "config"}, endpoint from ${m.endpointSource ?? "config"}`;
  const name = own ? `${own} for this session (configured: ${m.name ?? "none"})` : m.name;
  return `Model: ${name}${at} — ${reach}${age} · ${sources}`;
}

/** `text` with the endpoint URL and its host:port replaced by "the endpoint" (an error names them). Pure. */
function hideEndpoint(text: string, baseUrl: string): string {
  let host: string | undefined;
  try {
    host = new URL(baseUrl).host;
  } catch {
    host = undefined;
  }
  let out = text.split(baseUrl).join("the endpoint");
  if (host) out = out.split(host).join("the endpoint");
  return out;
}

/**
 * `text` with absolute local paths (`/home/me/.clawdis/…`, `~/…`; two segments at least, so `/status` stays)
 * replaced by "…". A URL's path is left alone: a slash right after a letter, digit, colon or slash does not start
 * a path. Pure.
 */
export function hidePaths(text: string): string {
  return text.replace(/(?<![\w:/.~-])(?:~(?:\/[\w.@+-]+)+|(?:\/[\w.@+-]+){2,})\/?/g, "…");
}

/** A command on one line, at most 80 characters. Pure. */
function oneLine(text: string): string {
  const line = text.replace(/\s*\n\s*/g, " ");
  return line.length > 80 ? `${line.slice(0, 77)}...` : line;
}
