import { open, readdir, stat } from "node:fs/promises";
import { join } from "node:path";
import { isValidSessionId } from "./session-id.js";
import { sessionIdOfTranscript, transcriptPathFor } from "./session-paths.js";
import type { SessionMap } from "./types.js";

/** The header line is short; a first line longer than this is not a header. */
const MAX_HEADER_BYTES = 64 * 1024;

/**
 * The first line of a file (without its newline), reading at most `maxBytes`. Undefined when the file is empty,
 * cannot be read, or its first line is longer than `maxBytes`.
 */
export async function readFirstLine(path: string, maxBytes = MAX_HEADER_BYTES): Promise<string | undefined> {
  let handle: Awaited<ReturnType<typeof open>>;
  try {
    handle = await open(path, "r");
  } catch {
    return undefined;
  }
  try {
    const buffer = Buffer.alloc(Math.min(maxBytes, 4096));
    const chunks: Buffer[] = [];
    let total = 0;
    while (total < maxBytes) {
      const { bytesRead } = await handle.read(buffer, 0, Math.min(buffer.length, maxBytes - total), total);
      if (bytesRead === 0) break;
      const chunk = buffer.subarray(0, bytesRead);
      const newline = chunk.indexOf(0x0a);
      if (newline >= 0) {
        chunks.push(Buffer.from(chunk.subarray(0, newline)));
        return Buffer.concat(chunks).toString("utf8").replace(/\r$/, "");
      }
      chunks.push(Buffer.from(chunk));
      total += bytesRead;
    }
    // No newline: the whole file is one line when it ended before the limit.
    if (total === 0 || total >= maxBytes) return undefined;
    return Buffer.concat(chunks).toString("utf8").replace(/\r$/, "");
  } finally {
    await handle.close();
  }
}

/** `{ sessionId, sessionKey }` when `line` is a version-1 transcript header, else undefined. */
export function parseHeaderLine(line: string): { sessionId: string; sessionKey: string } | undefined {
  let value: unknown;
  try {
    value = JSON.parse(line);
  } catch {
    return undefined;
  }
  if (typeof value !== "object" || value === null) return undefined;
  const header = value as Record<string, unknown>;
  if (header.type !== "session" || header.version !== 1) return undefined;
  if (
    !isValidSessionId(header.id) ||
    typeof header.sessionKey !== "string" ||
    header.sessionKey.length === 0
  ) {
    return undefined;
  }
  return { sessionId: header.id, sessionKey: header.sessionKey };
}

/**
 * Rebuilds a store from the transcript headers in `dir`: every `<id>.jsonl` whose first line is a version-1
 * header with that same id gives `sessionKey -> { sessionId, updatedAt: file mtime }`; per key the file modified
 * last wins. Used only when the store does not parse and no good copy of it is known.
 */
export async function rebuildFromTranscripts(dir: string): Promise<{ map: SessionMap; scanned: number }> {
  let names: string[];
  try {
    names = await readdir(dir);
  } catch {
    return { map: Object.create(null) as SessionMap, scanned: 0 };
  }
  const found: { key: string; sessionId: string; mtimeMs: number }[] = [];
  let scanned = 0;
  for (const name of names) {
    const id = sessionIdOfTranscript(name);
    if (id === undefined) continue;
    // A folder (a session folder whose id ends in `.jsonl`) is no transcript.
    const info = await stat(join(dir, name)).catch(() => undefined);
    if (!info?.isFile()) continue;
    scanned++;
    // An id the gateway refuses names no session (its header, with the same id, would not parse either).
    if (!isValidSessionId(id)) continue;
    const path = transcriptPathFor(dir, id);
    const line = await readFirstLine(path);
    const header = line === undefined ? undefined : parseHeaderLine(line);
    // The header must name its own file, or the entry would point at a transcript that is not there.
    if (!header || id !== header.sessionId) continue;
    found.push({ key: header.sessionKey, sessionId: header.sessionId, mtimeMs: Math.round(info.mtimeMs) });
  }
  found.sort((a, b) => a.mtimeMs - b.mtimeMs);
  // Null prototype: a header's sessionKey such as `__proto__` becomes an own key like any other.
  const map = Object.create(null) as SessionMap;
  for (const f of found) map[f.key] = { sessionId: f.sessionId, updatedAt: f.mtimeMs };
  return { map, scanned };
}
