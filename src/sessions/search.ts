import { closeSync, constants, openSync, readSync } from "node:fs";
import { readdir, stat } from "node:fs/promises";
import { dirname, join } from "node:path";
import { type FileScan, searchFile } from "./search-file.js";
import type { SearchMatcher, SearchRole } from "./search-match.js";
import { type Snippet, snippetOf } from "./search-snippet.js";
import { isValidSessionId } from "./session-id.js";
import { archiveDirOf, TRANSCRIPT_EXTENSION } from "./session-paths.js";
import { parseTranscriptHeader } from "./transcript-parse.js";
import type { SessionMap } from "./types.js";

/**
 * A search across every transcript of a store (`clawdis sessions search`, `GET /api/search`): the JSONL files as
 * they are, no index. Newest first by this rule: the transcripts (`<id>.jsonl` in the store's folder) in order of
 * their last modification, newest first (ties by name); within a file, newest line first (search-file.ts). It stops
 * at `limit` hits, so it reads only as much as those hits need; `--since` also skips every file last modified
 * before it (its entries are all older) and ends a file at its first older candidate line.
 *
 * A transcript's session key: the key whose store entry names its id (`current: true`), else the `sessionKey` of
 * its header (an archived session), else null.
 */
export interface SearchOptions {
  matcher: SearchMatcher;
  limit: number;
  /** Only transcripts of this session key. */
  key?: string;
  role?: SearchRole;
  /** Epoch ms. */
  since?: number;
  /** Lets other work run during a long search (the gateway passes one). */
  pause?: () => Promise<void>;
}

export interface SearchHit {
  sessionKey: string | null;
  sessionId: string;
  /** True when the key's store entry names this session id (it is the key's session now). */
  current: boolean;
  entryId: string;
  ts: string;
  role: SearchRole;
  snippet: Snippet;
}

export interface SearchReport {
  query: string;
  regex: boolean;
  limit: number;
  hits: SearchHit[];
  /** True when the search stopped at `limit` (there may be more hits). */
  limited: boolean;
  /** Transcripts read (in part or whole), and the bytes read from them. */
  transcripts: number;
  bytesRead: number;
  store: string;
}

interface Transcript {
  path: string;
  sessionId: string;
  mtimeMs: number;
}

/** The transcripts in `storeDir` and in its archive (pruned sessions), newest modification first. */
export async function listTranscripts(storeDir: string): Promise<Transcript[]> {
  const found: Transcript[] = [];
  for (const dir of [storeDir, archiveDirOf(storeDir)]) {
    const names = await readdir(dir).catch(() => [] as string[]);
    for (const name of names) {
      if (!name.endsWith(TRANSCRIPT_EXTENSION)) continue;
      const sessionId = name.slice(0, -TRANSCRIPT_EXTENSION.length);
      if (!isValidSessionId(sessionId)) continue;
      const path = join(dir, name);
      const info = await stat(path).catch(() => undefined);
      if (info?.isFile()) found.push({ path, sessionId, mtimeMs: info.mtimeMs });
    }
  }
  return found.sort((a, b) => b.mtimeMs - a.mtimeMs || (a.sessionId < b.sessionId ? -1 : 1));
}

/** The `sessionKey` of a transcript's header (line 1: 4 KiB read, up to 64 KiB for a long one), or undefined. */
export function headerKey(path: string): string | undefined {
  let fd: number;
  try {
    fd = openSync(path, constants.O_RDONLY | constants.O_NOFOLLOW);
  } catch {
    return undefined;
  }
  try {
    for (const size of [4096, 64 * 1024]) {
      const buffer = Buffer.allocUnsafe(size);
      const n = readSync(fd, buffer, 0, size, 0);
      const nl = buffer.subarray(0, n).indexOf(0x0a);
      if (nl === -1 && n === size) continue;
      const header = parseTranscriptHeader(buffer.toString("utf8", 0, nl === -1 ? n : nl));
      return header.ok ? header.value.sessionKey : undefined;
    }
    return undefined;
  } finally {
    closeSync(fd);
  }
}

export async function searchTranscripts(
  storePath: string,
  map: SessionMap,
  options: SearchOptions,
): Promise<SearchReport> {
  const keyOfId = new Map<string, string>();
  for (const [key, entry] of Object.entries(map)) keyOfId.set(entry.sessionId, key);
  const report: SearchReport = {
    query: options.matcher.query,
    regex: options.matcher.regex,
    limit: options.limit,
    hits: [],
    limited: false,
    transcripts: 0,
    bytesRead: 0,
    store: storePath,
  };
  for (const file of await listTranscripts(dirname(storePath))) {
    if (options.since !== undefined && file.mtimeMs < options.since) break;
    const storeKey = keyOfId.get(file.sessionId);
    const sessionKey = storeKey ?? headerKey(file.path) ?? null;
    if (options.key !== undefined && sessionKey !== options.key) continue;
    report.transcripts += 1;
    const scan: FileScan = { bytesRead: 0 };
    const hits = searchFile(
      file.path,
      {
        matcher: options.matcher,
        ...(options.role ? { role: options.role } : {}),
        ...(options.since !== undefined ? { since: options.since } : {}),
        ...(options.pause ? { pause: options.pause } : {}),
      },
      scan,
    );
    for await (const hit of hits) {
      report.hits.push({
        sessionKey,
        sessionId: file.sessionId,
        current: storeKey !== undefined,
        entryId: hit.entryId,
        ts: hit.ts,
        role: hit.role,
        snippet: snippetOf(hit.text, hit.start, hit.end),
      });
      if (report.hits.length >= options.limit) {
        report.limited = true;
        break;
      }
    }
    report.bytesRead += scan.bytesRead;
    if (report.limited) break;
  }
  return report;
}
