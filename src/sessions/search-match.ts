/**
 * What a transcript search looks for, decided once per search (pure): how a message's text is matched, and the
 * byte pre-filter that lets most lines of a transcript go by without being JSON-parsed.
 *
 * Contracts:
 * - plain text (the default) matches case-insensitively, ASCII letters only folding to ASCII letters (JavaScript's
 *   non-Unicode `i` flag: `k` finds `K`, never the Kelvin sign); `regex` takes the query as a JavaScript regular
 *   expression, case-insensitive the same way;
 * - matching is on the decoded message text (messageText), so text that JSON escapes in the file (quotes,
 *   backslashes, newlines, non-ASCII written as `\uXXXX`) is found as it reads;
 * - the pre-filter (`prefilter`) is the longest run of the query's characters that every JSON writer stores
 *   verbatim (ASCII letters, digits, space and punctuation but `"`, `\`, `/`, `<`, `>`, `&`, `'`): a line whose raw
 *   bytes do not contain it, case-insensitively, cannot match. Undefined (every line is parsed) for a regex and for a
 *   query without such a character.
 */
export interface SearchMatcher {
  /** The query as given. */
  query: string;
  regex: boolean;
  /** A case-insensitive, global pattern for the raw lines (read as latin1), or undefined: every line is a candidate. */
  prefilter?: RegExp;
  /** The first match in `text`, as UTF-16 offsets; undefined when there is none. */
  find(text: string): { start: number; end: number } | undefined;
}

/** The characters the pre-filter may use: those JSON writers never escape. */
const VERBATIM = /[A-Za-z0-9 !#$%()*+,\-.:;=?@[\]^_`{|}~]+/g;

export function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\/-]/g, "\\$&");
}

/** The longest run of verbatim characters in `query` ("" when there is none). */
export function verbatimRun(query: string): string {
  let best = "";
  for (const run of query.match(VERBATIM) ?? []) if (run.length > best.length) best = run;
  return best;
}

/** A matcher for `query`; a string is why it cannot be one (an empty query, a regex that does not compile). */
export function buildMatcher(query: string, regex: boolean): SearchMatcher | string {
  if (query.length === 0) return "the search text is empty";
  let pattern: RegExp;
  try {
    pattern = new RegExp(regex ? query : escapeRegExp(query), "i");
  } catch (error) {
    return `not a valid regular expression: ${error instanceof Error ? error.message : String(error)}`;
  }
  const run = regex ? "" : verbatimRun(query);
  const find = (text: string) => {
    const m = pattern.exec(text);
    if (!m) return undefined;
    // A regex that matches the empty string (`a*`) gives an empty match: a hit whose snippet marks nothing.
    return { start: m.index, end: m.index + m[0].length };
  };
  return {
    query,
    regex,
    ...(run.length > 0 ? { prefilter: new RegExp(escapeRegExp(run), "gi") } : {}),
    find,
  };
}

/** The roles a search returns (system prompts are never searched). */
export const SEARCH_ROLES = ["user", "assistant", "tool"] as const;
export type SearchRole = (typeof SEARCH_ROLES)[number];

export function isSearchRole(value: string): value is SearchRole {
  return (SEARCH_ROLES as readonly string[]).includes(value);
}

/**
 * The text a `message` entry is searched in: its `content` (a string, or the `text` of its parts), then, for each
 * tool call, its name and arguments on a line of their own. Undefined for anything else.
 */
export function messageText(message: unknown): string | undefined {
  if (typeof message !== "object" || message === null) return undefined;
  const m = message as { content?: unknown; tool_calls?: unknown };
  const parts: string[] = [];
  if (typeof m.content === "string") parts.push(m.content);
  else if (Array.isArray(m.content)) {
    for (const part of m.content) {
      const text = (part as { text?: unknown } | null)?.text;
      if (typeof text === "string") parts.push(text);
    }
  }
  if (Array.isArray(m.tool_calls)) {
    for (const call of m.tool_calls) {
      const fn = (call as { function?: { name?: unknown; arguments?: unknown } } | null)?.function;
      if (fn && typeof fn.name === "string") {
        parts.push(typeof fn.arguments === "string" ? `${fn.name} ${fn.arguments}` : fn.name);
      }
    }
  }
  return parts.join("\n");
}
