import { readFile } from "node:fs/promises";
import { dirname } from "node:path";
import type { ConfigSectionsSource } from "../core/config-sections.js";
import { defaultWorkspaceDir } from "../core/paths.js";
import { withReaped } from "../jobs/job.js";
import { readJobs } from "../jobs/jobs-file.js";
import { sessionKeyFor } from "../routing/session-key.js";
import { quoteId } from "../sessions/session-id.js";
import { sessionPaths } from "../sessions/session-paths.js";
import { readTranscriptForResume } from "../sessions/transcript-resume.js";
import { type CliIO, EXIT } from "./io.js";
import { buildShowReport, renderShowReport } from "./session-show-report.js";
import { readStore, withoutConfigFile } from "./sessions.js";
import { livePhases } from "./sessions-live.js";

export interface SessionShowOptions {
  json?: boolean;
  turns?: string;
  lines?: string;
}

/** How much of the transcript's end is read for the last turns. */
const TRANSCRIPT_TAIL_BYTES = 512 * 1024;
/** How much of the log's end is read for its tail. */
const LOG_TAIL_BYTES = 256 * 1024;

/**
 * `clawdis sessions show <key> [--json] [--turns N] [--lines N]` (docs/cli.md): the session's id, its folder,
 * transcript, workspace and log paths, its last turns (read from the end of the transcript) and the tail of its
 * `logs/session.log`, read from the files as they are (no lock, nothing written); the phase comes from the running
 * gateway of this state directory when one runs. Exit 0; 1 when the key has no session or the store does not
 * parse; 2 for bad usage or a config that does not load.
 */
export async function runSessionShow(
  key: string,
  opts: SessionShowOptions,
  io: CliIO,
  sections?: ConfigSectionsSource,
): Promise<number> {
  const turns = count(opts.turns, 5);
  const lines = count(opts.lines, 20);
  if (turns === undefined || lines === undefined) {
    io.stderr("clawdis sessions show: --turns and --lines take a whole number of 0 or more\n");
    return EXIT.usage;
  }
  const where = await places(io, sections);
  const map = await readStore(where.storePath, io, false);
  const entry = Object.hasOwn(map, key) ? map[key] : undefined;
  if (!entry) {
    io.stderr(`clawdis sessions show: no session ${quoteId(key)} in ${where.storePath}\n`);
    return EXIT.failed;
  }
  const paths = sessionPaths(
    { storeDir: dirname(where.storePath), workspaceDir: where.workspaceDir, primaryKey: where.primaryKey },
    key,
    entry.sessionId,
  );
  const transcript = await readTranscriptForResume(paths.transcript, { maxBytes: TRANSCRIPT_TAIL_BYTES });
  const log = await readTail(paths.log, LOG_TAIL_BYTES);
  const live = await livePhases(io.env, where.storePath);
  const phase = live && "phases" in live ? live.phases.get(key) : undefined;
  // Without a running gateway, nothing of the folder's jobs runs any more.
  const recorded = await readJobs(paths.folder);
  const now = Date.now();
  const jobs = live ? recorded : withReaped(recorded, new Set(), now);
  const report = buildShowReport({
    key,
    entry,
    paths,
    entries: transcript.entries,
    log,
    turns,
    lines,
    ...(phase ? { phase } : {}),
    jobs,
    now,
  });
  io.stdout(opts.json ? `${JSON.stringify(report, null, 2)}\n` : `${renderShowReport(report)}\n`);
  return EXIT.ok;
}

/** The store, the agent's workspace and the primary key: from the config, or its defaults without a config file. */
async function places(
  io: CliIO,
  sections: ConfigSectionsSource | undefined,
): Promise<{ storePath: string; workspaceDir: string; primaryKey: string }> {
  const defaults = withoutConfigFile(io.env);
  if (defaults) {
    return { storePath: defaults.storePath, workspaceDir: defaultWorkspaceDir(io.env), primaryKey: "main" };
  }
  const { loadConfig } = await import("../core/config.js");
  const loaded = loadConfig(io.env, sections ? await sections(io.env) : undefined);
  return {
    storePath: loaded.storePath,
    workspaceDir: loaded.workspaceDir,
    primaryKey: sessionKeyFor({ chatType: "direct", chatId: "" }, loaded.config.inbound.reply.session),
  };
}

/** The last `maxBytes` of a file ("" when it does not exist); a line cut at the start is dropped. */
async function readTail(path: string, maxBytes: number): Promise<string> {
  const text = await readFile(path).catch(() => undefined);
  if (!text) return "";
  if (text.length <= maxBytes) return text.toString("utf8");
  const tail = text.subarray(text.length - maxBytes).toString("utf8");
  return tail.slice(tail.indexOf("\n") + 1);
}

function count(value: string | undefined, fallback: number): number | undefined {
  if (value === undefined) return fallback;
  return /^\d+$/.test(value) ? Number(value) : undefined;
}
