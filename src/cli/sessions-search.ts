import { stat } from "node:fs/promises";
import { join } from "node:path";
import { type Clock, systemClock } from "../core/clock.js";
import type { ConfigSectionsSource } from "../core/config-sections.js";
import { expandHome } from "../core/paths.js";
import { type SearchReport, searchTranscripts } from "../sessions/search.js";
import { parseSearchRequest } from "../sessions/search-request.js";
import { readStoreFile } from "../sessions/store-read.js";
import type { SessionMap } from "../sessions/types.js";
import { useColor } from "./agent-live.js";
import { renderTsv } from "./format-table.js";
import { type CliIO, EXIT } from "./io.js";
import { withoutConfigFile } from "./sessions.js";

export interface SessionsSearchOptions {
  regex?: boolean;
  key?: string;
  since?: string;
  role?: string;
  limit?: string;
  json?: boolean;
  store?: string;
}

/**
 * `clawdis sessions search <text> [--regex] [--key K] [--since 7d] [--role R] [--limit N] [--json] [--store P]`
 * (docs/cli.md): the hits in every transcript of the store, newest first (sessions/search.ts), read from the files
 * as they are, whether a gateway runs or not (no lock, nothing written). Exit 0, with or without hits; 2 for bad
 * usage (a bad flag, a regex that does not compile) or a config that does not load. A store that does not parse
 * is named on stderr and the search goes on with the transcripts' headers for keys.
 */
export async function runSessionsSearch(
  text: string,
  opts: SessionsSearchOptions,
  io: CliIO,
  sections?: ConfigSectionsSource,
  clock: Clock = systemClock,
): Promise<number> {
  const options = parseSearchRequest(
    {
      q: text,
      ...(opts.regex ? { regex: true } : {}),
      ...(opts.key !== undefined ? { key: opts.key } : {}),
      ...(opts.since !== undefined ? { since: opts.since } : {}),
      ...(opts.role !== undefined ? { role: opts.role } : {}),
      ...(opts.limit !== undefined ? { limit: opts.limit } : {}),
    },
    clock.now(),
  );
  if (typeof options === "string") {
    io.stderr(`clawdis sessions search: ${options}\n`);
    return EXIT.usage;
  }
  const storePath = await resolveStorePath(opts.store, io, sections);
  const map = await storeMap(storePath, io);
  const report = await searchTranscripts(storePath, map, options);
  if (opts.json) {
    io.stdout(`${JSON.stringify(report, null, 2)}\n`);
    return EXIT.ok;
  }
  io.stdout(renderSearchReport(report, io.isTTY, useColor(io.isTTY, io.env)));
  if (!io.isTTY && report.limited) {
    io.stderr(`clawdis sessions search: stopped at ${report.limit} hits (--limit); there may be more\n`);
  }
  return EXIT.ok;
}

async function resolveStorePath(
  store: string | undefined,
  io: CliIO,
  sections: ConfigSectionsSource | undefined,
): Promise<string> {
  if (store !== undefined) {
    const path = expandHome(store, io.env);
    const info = await stat(path).catch(() => undefined);
    return info?.isDirectory() ? join(path, "sessions.json") : path;
  }
  const defaults = withoutConfigFile(io.env);
  if (defaults) return defaults.storePath;
  const { loadConfig } = await import("../core/config.js");
  return loadConfig(io.env, sections ? await sections(io.env) : undefined).storePath;
}

/** The store's entries when it parses; otherwise none (keys then come from the transcripts' headers). */
async function storeMap(path: string, io: CliIO): Promise<SessionMap> {
  const read = await readStoreFile(path);
  if (!read.exists) return {};
  if (!read.parsed.ok) {
    io.stderr(
      `clawdis sessions search: the session store ${path} does not parse (${read.parsed.reason}); keys are taken from the transcripts' headers\n`,
    );
    return {};
  }
  return read.parsed.map;
}

const MARK_ON = "\u001b[1;7m";
const MARK_OFF = "\u001b[0m";

/** `2026-01-31 09:05` in the machine's time zone (the ts as it is when it does not parse). */
export function localTime(ts: string): string {
  const at = new Date(ts);
  if (Number.isNaN(at.getTime())) return ts;
  const two = (n: number) => String(n).padStart(2, "0");
  return `${at.getFullYear()}-${two(at.getMonth() + 1)}-${two(at.getDate())} ${two(at.getHours())}:${two(at.getMinutes())}`;
}

/**
 * The human report (pure). On a terminal: a title, then per hit a line `time  key  role  session id` and the
 * snippet under it, the match marked (bold and inverse) when `color`. Piped: one tab-separated line per hit
 * (ts, key, session id, role, snippet), unmarked. No hits: one line saying so, either way.
 */
export function renderSearchReport(report: SearchReport, tty: boolean, color: boolean): string {
  const what = `${report.regex ? "/" : "\u201c"}${report.query}${report.regex ? "/" : "\u201d"}`;
  if (report.hits.length === 0) {
    const files = `${report.transcripts} transcript${report.transcripts === 1 ? "" : "s"}`;
    return `no hits for ${what} in ${files} (store ${report.store})\n`;
  }
  if (!tty) {
    const rows = report.hits.map((h) => [h.ts, h.sessionKey ?? "-", h.sessionId, h.role, h.snippet.text]);
    return `${renderTsv(rows)}\n`;
  }
  const count = `${report.hits.length} hit${report.hits.length === 1 ? "" : "s"}`;
  const more = report.limited ? ` (stopped at --limit ${report.limit}; there may be more)` : "";
  const lines = [`${count} for ${what}, newest first${more}`, ""];
  for (const hit of report.hits) {
    const s = hit.snippet;
    const marked = color
      ? `${s.text.slice(0, s.start)}${MARK_ON}${s.text.slice(s.start, s.end)}${MARK_OFF}${s.text.slice(s.end)}`
      : s.text;
    const archived = hit.current ? "" : "  (earlier session)";
    lines.push(`${localTime(hit.ts)}  ${hit.sessionKey ?? "?"}  ${hit.role}  ${hit.sessionId}${archived}`);
    lines.push(`  ${marked}`);
  }
  return `${lines.join("\n")}\n`;
}
