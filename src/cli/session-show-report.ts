import type { JobRecord } from "../jobs/job.js";
import { jobLine } from "../jobs/job-tools.js";
import type { SessionPaths } from "../sessions/session-paths.js";
import type { MessageEntry, SessionEntry, TranscriptEntry } from "../sessions/types.js";

/**
 * What `clawdis sessions show <key>` prints (docs/cli.md): the session's id, folder, transcript, workspace and log
 * paths, its last turns (from the transcript), the tail of its log and its background jobs (`jobs/jobs.json`). Pure:
 * the caller reads the files.
 */
export interface SessionShowReport {
  key: string;
  sessionId: string;
  folder: string;
  transcript: string;
  workspace: string;
  log: string;
  /** The session's phase while the running gateway holds it loaded; absent otherwise. */
  phase?: string;
  updatedAt: number;
  /** The last turns, oldest first. */
  turns: ShownTurn[];
  /** The last lines of `logs/session.log`, oldest first (empty when there is no log yet). */
  logTail: string[];
  /** The conversation's background jobs, oldest first; each line as `job_status` words it. */
  jobs: { record: JobRecord; line: string }[];
}

/** A person's message and what answered it. */
export interface ShownTurn {
  at: string;
  channel?: string;
  sender?: string;
  text: string;
  /** The final answer's text; absent when the turn has none (yet). */
  reply?: string;
  /** The tools it called, in order. */
  tools: string[];
}

/** The last `count` turns in `entries` (transcript order): each person's message, its tool calls and final answer. */
export function lastTurns(entries: readonly TranscriptEntry[], count: number): ShownTurn[] {
  const turns: ShownTurn[] = [];
  for (const entry of entries) {
    if (entry.type !== "message") continue;
    const { message, meta, ts } = entry as MessageEntry;
    if (message.role === "user") {
      turns.push({
        at: ts,
        ...(typeof meta?.channel === "string" ? { channel: meta.channel } : {}),
        ...(typeof meta?.senderId === "string" ? { sender: meta.senderId } : {}),
        text: message.content ?? "",
        tools: [],
      });
      continue;
    }
    const turn = turns.at(-1);
    if (!turn || message.role !== "assistant") continue;
    for (const call of message.tool_calls ?? []) turn.tools.push(call.function.name);
    if (meta?.final === true && message.content) turn.reply = message.content;
  }
  return count > 0 ? turns.slice(-count) : [];
}

/** The last `count` lines of a text file's content (no empty last line). */
export function tailLines(text: string, count: number): string[] {
  const lines = text.split("\n");
  if (lines.at(-1) === "") lines.pop();
  return count > 0 ? lines.slice(-count) : [];
}

export function buildShowReport(input: {
  key: string;
  entry: SessionEntry;
  paths: SessionPaths;
  entries: readonly TranscriptEntry[];
  log: string;
  turns: number;
  lines: number;
  phase?: string;
  /** The folder's job records (a `running` one already shown `reaped` when no gateway runs). */
  jobs?: readonly JobRecord[];
  now?: number;
}): SessionShowReport {
  const { paths } = input;
  return {
    key: input.key,
    sessionId: input.entry.sessionId,
    folder: paths.folder,
    transcript: paths.transcript,
    workspace: paths.workspace,
    log: paths.log,
    ...(input.phase ? { phase: input.phase } : {}),
    updatedAt: input.entry.updatedAt,
    turns: lastTurns(input.entries, input.turns),
    logTail: tailLines(input.log, input.lines),
    jobs: (input.jobs ?? []).map((record) => ({
      record,
      line: jobLine(record, input.now ?? input.entry.updatedAt),
    })),
  };
}

/** The longest text of a message shown in the human output. */
const SHOWN_CHARS = 200;

/** The human output. */
export function renderShowReport(report: SessionShowReport): string {
  const out = [
    `session ${report.key}${report.phase ? ` (${report.phase})` : ""}`,
    `  id          ${report.sessionId}`,
    `  folder      ${report.folder}`,
    `  transcript  ${report.transcript}`,
    `  workspace   ${report.workspace}`,
    `  log         ${report.log}`,
    "",
    report.turns.length === 0
      ? "no turns yet"
      : `last ${report.turns.length === 1 ? "turn" : `${report.turns.length} turns`}:`,
  ];
  for (const turn of report.turns) {
    const who = [turn.channel, turn.sender].filter((x) => x !== undefined).join(":");
    out.push(`  ${turn.at} ${who || "person"}: ${oneLine(turn.text)}`);
    if (turn.tools.length > 0) out.push(`    tools: ${turn.tools.join(", ")}`);
    out.push(`    reply: ${turn.reply === undefined ? "(none)" : oneLine(turn.reply)}`);
  }
  out.push("", report.logTail.length === 0 ? "no log lines yet" : "log tail:");
  for (const line of report.logTail) out.push(`  ${line}`);
  if (report.jobs.length > 0) out.push("", "background jobs:");
  for (const job of report.jobs) out.push(`  ${job.line}`);
  return out.join("\n");
}

function oneLine(text: string): string {
  const flat = text.replace(/\s+/g, " ").trim();
  return flat.length > SHOWN_CHARS ? `${flat.slice(0, SHOWN_CHARS)}…` : flat;
}
