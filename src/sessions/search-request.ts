import type { SearchOptions } from "./search.js";
import { buildMatcher, isSearchRole, SEARCH_ROLES } from "./search-match.js";
import { parseSince } from "./search-since.js";
import { whyInvalidSessionKey } from "./session-key-rules.js";

/**
 * A search as asked (the CLI's flags, the API's query parameters), checked once (pure): the options of
 * `searchTranscripts`, or why they are refused (a usage error, 400 over HTTP).
 */
export interface SearchRequest {
  q: string;
  regex?: boolean;
  key?: string;
  since?: string;
  role?: string;
  limit?: string;
}

/** Hits when no limit is given, and the most one search returns. */
export const SEARCH_DEFAULT_LIMIT = 20;
export const SEARCH_MAX_LIMIT = 1000;

export function parseSearchRequest(request: SearchRequest, now: number): SearchOptions | string {
  const matcher = buildMatcher(request.q, request.regex === true);
  if (typeof matcher === "string") return matcher;
  let limit = SEARCH_DEFAULT_LIMIT;
  if (request.limit !== undefined) {
    if (
      !/^\d+$/.test(request.limit) ||
      Number(request.limit) < 1 ||
      Number(request.limit) > SEARCH_MAX_LIMIT
    ) {
      return `limit must be a whole number from 1 to ${SEARCH_MAX_LIMIT}, got ${JSON.stringify(request.limit)}`;
    }
    limit = Number(request.limit);
  }
  const options: SearchOptions = { matcher, limit };
  if (request.role !== undefined) {
    if (!isSearchRole(request.role)) {
      return `role must be one of ${SEARCH_ROLES.join(", ")}, got ${JSON.stringify(request.role)}`;
    }
    options.role = request.role;
  }
  if (request.since !== undefined) {
    const since = parseSince(request.since, now);
    if (typeof since === "string") return since;
    options.since = since;
  }
  if (request.key !== undefined) {
    const bad = whyInvalidSessionKey(request.key);
    if (bad !== undefined) return `key: ${bad}`;
    options.key = request.key;
  }
  return options;
}
