import { maskSecrets } from "./log-redact.js";

/**
 * One line of a session log (docs/files.md, The session log): `<ISO time> <kind> key=value …`, one line per
 * event, values quoted (JSON) when they hold a space, a quote, `=` or a line break, and every string value passed
 * through `maskSecrets` (so a line a later writer adds through `SessionLog.line` cannot show a secret either).
 * Fields whose value is undefined are left out; `at` is the time, or its ISO text. Pure.
 */
export type LogFieldValue = string | number | boolean | undefined;

export function formatSessionLogLine(
  at: Date | string,
  kind: string,
  fields: Readonly<Record<string, LogFieldValue>>,
  secrets: readonly string[],
): string {
  // Built as one string (no array of parts, no entries array): a turn writes a few of these.
  let line = `${typeof at === "string" ? at : at.toISOString()} ${safeWord(kind)}`;
  for (const key in fields) {
    const value = fields[key];
    if (value === undefined) continue;
    line += ` ${safeWord(key)}=${formatValue(value, secrets)}`;
  }
  return line;
}

function formatValue(value: string | number | boolean, secrets: readonly string[]): string {
  if (typeof value !== "string") return String(value);
  const masked = maskSecrets(value, secrets);
  return masked === "" || /[\s"=\\]|[^\x20-\x7e\u00a0-\uffff]/.test(masked) ? JSON.stringify(masked) : masked;
}

/** A kind or key that is one word already. */
const WORD = /^[A-Za-z0-9._-]+$/;

/** A kind or key as one word: anything but letters, digits, `.`, `_`, `-` becomes `_`. */
function safeWord(word: string): string {
  if (WORD.test(word)) return word;
  const cleaned = word.replace(/[^A-Za-z0-9._-]/g, "_");
  return cleaned.length > 0 ? cleaned : "_";
}

/** The size at which a session log is rotated: `session.log` becomes `session.log.1` (the one before is dropped). */
export const SESSION_LOG_MAX_BYTES = 1024 * 1024;

/**
 * Whether `session.log`, now `size` bytes, is rotated before `adding` more bytes are appended: when they would
 * take it past `limit`, unless it is empty (a single write larger than the limit still goes in whole). Pure.
 */
export function shouldRotate(size: number, adding: number, limit: number = SESSION_LOG_MAX_BYTES): boolean {
  return size > 0 && size + adding > limit;
}
