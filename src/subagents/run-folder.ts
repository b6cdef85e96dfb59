import { appendFile, mkdir, readdir, readFile, rename, writeFile } from "node:fs/promises";
import { join } from "node:path";
import type { Authority } from "../plugin-api/types.js";
import type { InternalRoute } from "../runtime/internal-input.js";
import type { TranscriptEntry } from "../sessions/types.js";
import type { RunState } from "./run-state.js";

/**
 * A sub-agent run's folder, `<session folder>/subagents/<run-id>/` (docs/files.md, Session folders): `task.md`
 * (the brief, who asked, the tools), `run.json` (the run's state, written atomically at each step), `result.md`
 * (written when it ends), `transcript.jsonl` (the child's own messages), `logs/run.log` (one line per tool call
 * and the end) and `artifacts/` (`truncated-output.md` for a reply cut at the output limit).
 */

/** What `run.json` holds. */
export interface RunRecord {
  version: 1;
  id: string;
  /** The parent session's key and conversation id (the folder is in that conversation's folder). */
  sessionKey: string;
  sessionId: string;
  requester: { channel: string; senderId: string; authority: Authority };
  /** The chat the parent's notice is answered in: the chat the spawn came from. */
  route: InternalRoute;
  /** The child's tools. */
  tools: string[];
  /** The tools the turn on the notice gets: the requester's in the parent session. */
  noticeTools: string[];
  brief: string;
  startedAt: string;
  endedAt?: string;
  state: RunState;
}

export const SUBAGENTS_DIR = "subagents";

export function runFolder(sessionFolder: string, id: string): string {
  return join(sessionFolder, SUBAGENTS_DIR, id);
}

/** Creates the folder (0700) and writes `task.md` and the first `run.json`. */
export async function createRunFolder(folder: string, record: RunRecord): Promise<void> {
  await mkdir(join(folder, "logs"), { recursive: true, mode: 0o700 });
  await writeFile(join(folder, "task.md"), taskText(record), { mode: 0o600 });
  await writeRecord(folder, record);
}

export function taskText(record: RunRecord): string {
  const { requester } = record;
  return [
    `# Sub-agent ${record.id}`,
    "",
    `Requested by ${requester.authority} ${requester.channel}:${requester.senderId} in session ${record.sessionKey}, ${record.startedAt}.`,
    `Tools: ${record.tools.length > 0 ? record.tools.join(", ") : "none"}.`,
    "",
    "## Brief",
    "",
    record.brief,
    "",
  ].join("\n");
}

/** `run.json`, atomically (a temp file renamed over it). */
export async function writeRecord(folder: string, record: RunRecord): Promise<void> {
  const path = join(folder, "run.json");
  const temp = `${path}.${process.pid}.tmp`;
  await writeFile(temp, `${JSON.stringify(record, null, 2)}\n`, { mode: 0o600 });
  await rename(temp, path);
}

export async function writeResult(folder: string, text: string): Promise<void> {
  await writeFile(join(folder, "result.md"), text.endsWith("\n") ? text : `${text}\n`, { mode: 0o600 });
}

export async function writeArtifact(folder: string, name: string, text: string): Promise<void> {
  const path = join(folder, name);
  await mkdir(join(path, ".."), { recursive: true, mode: 0o700 });
  await writeFile(path, text, { mode: 0o600 });
}

export async function appendLine(folder: string, file: string, line: string): Promise<void> {
  await appendFile(join(folder, file), `${line}\n`, { mode: 0o600 });
}

/**
 * Every run record under the store's folder (`<storeDir>/<sessionId>/subagents/<id>/run.json`), with its folder.
 * A record that does not read is skipped with `bad` told why.
 */
export async function readAllRecords(
  storeDir: string,
  bad: (path: string, why: string) => void,
): Promise<{ folder: string; record: RunRecord }[]> {
  const found: { folder: string; record: RunRecord }[] = [];
  for (const session of await names(storeDir)) {
    const runs = join(storeDir, session, SUBAGENTS_DIR);
    for (const id of await names(runs)) {
      const folder = join(runs, id);
      const path = join(folder, "run.json");
      try {
        const record = JSON.parse(await readFile(path, "utf8")) as RunRecord;
        if (record.version !== 1 || typeof record.id !== "string" || !record.state) {
          bad(path, "not a run record of version 1");
          continue;
        }
        found.push({ folder, record });
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code === "ENOENT") continue;
        bad(path, String(error));
      }
    }
  }
  return found;
}

async function names(dir: string): Promise<string[]> {
  try {
    return (await readdir(dir, { withFileTypes: true })).filter((d) => d.isDirectory()).map((d) => d.name);
  } catch {
    return [];
  }
}

/** The entries of the run's `transcript.jsonl` (none when it has none yet). */
export async function readEntries(folder: string): Promise<TranscriptEntry[]> {
  return parseEntries(await readFile(join(folder, "transcript.jsonl"), "utf8").catch(() => ""));
}

/** The entries of a child's `transcript.jsonl` text; a line that does not parse (a write a kill cut) is left out. */
export function parseEntries(text: string): TranscriptEntry[] {
  const entries: TranscriptEntry[] = [];
  for (const line of text.split("\n")) {
    if (line.trim() === "") continue;
    try {
      entries.push(JSON.parse(line) as TranscriptEntry);
    } catch {
      // A torn last line: what it held did not happen as far as the run knows.
    }
  }
  return entries;
}
