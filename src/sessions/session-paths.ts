import { basename, join } from "node:path";
import { ClawdisError } from "../core/errors.js";
import { quoteId, whyInvalid } from "./session-id.js";

/**
 * Where every file of a session lives, decided here and nowhere else:
 * - its transcript, per session id, flat in the store's folder: `<storeDir>/<sessionId>.jsonl` (a `/new` starts a
 *   new file; the store rebuild and the doctor find transcripts by this name);
 * - its workspace (tools' working directory), per key: the workspace itself for the primary session (`mainKey`,
 *   or `global` under `scope: "global"`), `<workspaceDir>/<key, made safe>` for every other key;
 * - its inbox, where staged attachments are moved: `<workspace>/inbox`.
 */
export interface SessionPaths {
  transcript: string;
  workspace: string;
  inbox: string;
}

/** The folders the paths of sessions are in, and the primary session's key (its workspace is the root). */
export interface SessionRoots {
  storeDir: string;
  workspaceDir: string;
  primaryKey: string;
}

/** The name ending of a transcript file. */
export const TRANSCRIPT_EXTENSION = ".jsonl";

/** The paths of session `key` in the conversation `sessionId`. Throws SESSION_ID_INVALID as `transcriptPathFor`. */
export function sessionPaths(roots: SessionRoots, key: string, sessionId: string): SessionPaths {
  const workspace = workspaceFor(roots, key);
  return {
    transcript: transcriptPathFor(roots.storeDir, sessionId),
    workspace,
    inbox: join(workspace, "inbox"),
  };
}

/** The workspace of session `key` (see SessionPaths). Not created here. */
export function workspaceFor(roots: Omit<SessionRoots, "storeDir">, key: string): string {
  return key === roots.primaryKey ? roots.workspaceDir : join(roots.workspaceDir, safeDirName(key));
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

function safeDirName(key: string): string {
  return key.replace(/[^A-Za-z0-9._-]/g, "_");
}
