import { basename, join } from "node:path";
import { ClawdisError } from "../core/errors.js";
import { quoteId, whyInvalid } from "./session-id.js";

/**
 * Where every file of a session lives, decided here and nowhere else (docs/files.md, Session folders):
 * - its transcript, per session id, flat in the store's folder: `<storeDir>/<sessionId>.jsonl` (a `/new` starts a
 *   new file; the store rebuild and the doctor find transcripts by this name, so the folder beside it, which has no
 *   `.jsonl` ending, is never taken for one);
 * - its folder, per session id, beside the transcript: `<storeDir>/<sessionId>/`, holding
 *   `attachment-staging/` (uploads as they came, untrusted), `artifacts/` (files to keep: what `send_file` sent),
 *   `logs/session.log` (the redacted session log) and, for every session but the primary one, `workspace/`;
 * - its workspace (tools' working directory): for the primary session (`mainKey`, or `global` under
 *   `scope: "global"`) the agent's workspace (`inbound.reply.agent.workspace`, default `<state>/workspace`),
 *   shared by all its session ids, so that `/new` never takes the owner's files away; for every other key the
 *   session folder's `workspace/` (a group's files stay with that conversation);
 * - its inbox, where staged attachments are copied for the tools: `<workspace>/inbox`.
 * Nothing is created here: every folder appears when first needed (0700).
 */
export interface SessionPaths {
  transcript: string;
  /** `<storeDir>/<sessionId>`. */
  folder: string;
  workspace: string;
  inbox: string;
  /** `<folder>/attachment-staging`. */
  attachmentStaging: string;
  /** `<folder>/artifacts`. */
  artifacts: string;
  /** `<folder>/logs/session.log` (rotated to `session.log.1`). */
  log: string;
}

/** The folders the paths of sessions are in, and the primary session's key (it works in `workspaceDir`). */
export interface SessionRoots {
  storeDir: string;
  /** The agent's workspace: `inbound.reply.agent.workspace` resolved, else `<state>/workspace`. */
  workspaceDir: string;
  primaryKey: string;
}

/** The name ending of a transcript file. */
export const TRANSCRIPT_EXTENSION = ".jsonl";

/** The paths of session `key` in the conversation `sessionId`. Throws SESSION_ID_INVALID as `transcriptPathFor`. */
export function sessionPaths(roots: SessionRoots, key: string, sessionId: string): Readonly<SessionPaths> {
  // Every message asks for its session's paths: the answer for the same inputs is kept (a few path joins and one
  // object fewer per message); a small bounded map, emptied when full.
  const memoKey = `${roots.storeDir}\u0000${roots.workspaceDir}\u0000${roots.primaryKey}\u0000${key}\u0000${sessionId}`;
  const known = pathsMemo.get(memoKey);
  if (known) return known;
  const paths = Object.freeze(computePaths(roots, key, sessionId));
  if (pathsMemo.size >= PATHS_MEMO_SIZE) pathsMemo.clear();
  pathsMemo.set(memoKey, paths);
  return paths;
}

/** How many sessions' paths `sessionPaths` keeps. */
const PATHS_MEMO_SIZE = 1024;
const pathsMemo = new Map<string, Readonly<SessionPaths>>();

function computePaths(roots: SessionRoots, key: string, sessionId: string): SessionPaths {
  const transcript = transcriptPathFor(roots.storeDir, sessionId);
  const folder = join(roots.storeDir, sessionId);
  const workspace =
    key === roots.primaryKey ? roots.workspaceDir : folderWorkspaceFor(roots.storeDir, sessionId);
  return {
    transcript,
    folder,
    workspace,
    inbox: join(workspace, "inbox"),
    attachmentStaging: join(folder, "attachment-staging"),
    artifacts: join(folder, "artifacts"),
    log: join(folder, "logs", "session.log"),
  };
}

/** The folder pruned sessions are moved to (transcript and session folder alike): `<storeDir>/archive/`. */
export function archiveDirOf(storeDir: string): string {
  return join(storeDir, "archive");
}

/** The `workspace/` in the folder of session id `sessionId`: where every session but the primary one works. */
export function folderWorkspaceFor(storeDir: string, sessionId: string): string {
  return join(storeDir, sessionId, "workspace");
}

/**
 * `<storeDir>/<sessionId>.jsonl`. Throws SESSION_ID_INVALID for any id that does not match SESSION_ID_PATTERN,
 * so that no caller ever builds a path from an unchecked id.
 */
export function transcriptPathFor(storeDir: string, sessionId: string): string {
  const why = whyInvalid(sessionId);
  if (why !== undefined) {
    throw new ClawdisError(
      "SESSION_ID_INVALID",
      `session id ${quoteId(sessionId)} is refused: ${why}. A session id may only use letters, digits, '.', '_' and '-' (1 to 128 characters), because it becomes a file name in ${storeDir}`,
    );
  }
  return join(storeDir, `${sessionId}${TRANSCRIPT_EXTENSION}`);
}

/**
 * The session id a file in the store's folder is the transcript of, by its name (`<id>.jsonl`; the id is not
 * checked); undefined for any other file.
 */
export function sessionIdOfTranscript(path: string): string | undefined {
  const name = basename(path);
  return name.endsWith(TRANSCRIPT_EXTENSION) ? name.slice(0, -TRANSCRIPT_EXTENSION.length) : undefined;
}
