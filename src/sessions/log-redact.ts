import { createHash } from "node:crypto";

/**
 * What a session log line may show of a value (docs/files.md, The session log). Pure.
 * - every known secret value (the config's tokens and keys, the gateway token, the environment's `*_KEY`,
 *   `*_TOKEN`, `*_SECRET` variables: `secretValues`) is masked wherever it appears, as `«secret»`;
 * - anything that looks like a token or key (`sk-…`, `ghp_…`, `xoxb-…`, a Telegram bot token, `AKIA…`, a JWT,
 *   `Bearer …`, `Basic …`, `password=…`, a run of 32 or more letters and digits mixing both) is masked as `«token»`;
 * - a string longer than LONG_STRING (after masking) shows only as `<N chars #hash>`, the hash being the first
 *   8 hex digits of the SHA-256 of the masked text (equal values can be told apart, nothing secret is derived).
 */
export const LONG_STRING = 80;

/** The shortest secret value that is masked (a shorter one would mask ordinary words). */
export const MIN_SECRET_LENGTH = 6;

export const SECRET_MASK = "«secret»";
export const TOKEN_MASK = "«token»";

const TOKEN_PATTERNS: readonly RegExp[] = [
  /\b(?:sk|pk|rk)-[A-Za-z0-9_-]{16,}/g,
  /\bgh[pousr]_[A-Za-z0-9]{20,}/g,
  /\bxox[abprs]-[A-Za-z0-9-]{10,}/g,
  /\b\d{5,12}:[A-Za-z0-9_-]{30,}/g,
  /\bAKIA[0-9A-Z]{16}\b/g,
  /\beyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}/g,
];
/** `Bearer x`, `api_key=x`, `token: x`, `password=x`: the value after the name is masked, the name kept. */
const NAMED_SECRET =
  /\b((?:Bearer|Basic)\s+|(?:api[_-]?key|apikey|token|secret|password|passwd|pwd)["']?\s*[:=]\s*["']?)([^\s"'&;,]{4,})/gi;
/** A long run of letters and digits (with `_` `-`) that mixes letters and digits: a key, a hash, a token. */
const LONG_RUN = /[A-Za-z0-9_-]{32,}/g;

/**
 * Whether `text` may hold anything TOKEN_PATTERNS, NAMED_SECRET or LONG_RUN match: their union, case-insensitive
 * (a looser test than theirs: it only decides whether they run).
 */
const MAY_HOLD_TOKEN = new RegExp(
  [...TOKEN_PATTERNS, NAMED_SECRET, LONG_RUN].map((pattern) => `(?:${pattern.source})`).join("|"),
  "i",
);

/** `secrets` longest first, sorted once per list (the callers pass the same list until the config changes). */
const sortedLists = new WeakMap<readonly string[], readonly string[]>();
function longestFirst(secrets: readonly string[]): readonly string[] {
  let sorted = sortedLists.get(secrets);
  if (!sorted) {
    sorted = [...secrets].sort((a, b) => b.length - a.length);
    sortedLists.set(secrets, sorted);
  }
  return sorted;
}

/** `text` with every secret value and anything that looks like a token masked. */
export function maskSecrets(text: string, secrets: readonly string[]): string {
  let out = text;
  // Longest first: a secret that holds another is masked whole.
  for (const secret of longestFirst(secrets)) {
    if (secret.length >= MIN_SECRET_LENGTH && out.includes(secret)) out = out.split(secret).join(SECRET_MASK);
  }
  // Most values (a model's name, a channel, a stop reason) match no pattern: one test instead of eight replaces.
  if (!MAY_HOLD_TOKEN.test(out)) return out;
  for (const pattern of TOKEN_PATTERNS) out = out.replace(pattern, TOKEN_MASK);
  out = out.replace(NAMED_SECRET, (_all, name: string) => `${name}${TOKEN_MASK}`);
  return out.replace(LONG_RUN, (run) => (/[0-9]/.test(run) && /[A-Za-z]/.test(run) ? TOKEN_MASK : run));
}

/** A string as a log shows it: masked, and a long one as its length and a short hash. */
export function redactString(text: string, secrets: readonly string[]): string {
  const masked = maskSecrets(text, secrets);
  if (masked.length <= LONG_STRING) return masked;
  const hash = createHash("sha256").update(masked).digest("hex").slice(0, 8);
  return `<${text.length} chars #${hash}>`;
}

/** How deep objects and arrays in tool arguments are shown; deeper ones show as their size. */
const MAX_DEPTH = 3;
/** How many keys or items of one object or array are shown. */
const MAX_ITEMS = 10;

/**
 * A tool call's arguments (JSON text) as the session log shows them: `{command: "ls -la", content: <2048 chars
 * #1a2b3c4d>}`. Keys are kept; strings go through `redactString`; numbers, booleans and null are shown. Text that
 * is not JSON is redacted as one string.
 */
export function redactToolArguments(json: string, secrets: readonly string[]): string {
  let parsed: unknown;
  try {
    parsed = json.trim() === "" ? {} : JSON.parse(json);
  } catch {
    return redactString(json, secrets);
  }
  return show(parsed, secrets, 0);
}

function show(value: unknown, secrets: readonly string[], depth: number): string {
  if (typeof value === "string") {
    const shown = redactString(value, secrets);
    return shown.startsWith("<") && shown !== value ? shown : JSON.stringify(shown);
  }
  if (value === null || typeof value !== "object") return String(value);
  const entries = Array.isArray(value)
    ? value.map((v, i) => [String(i), v] as const)
    : Object.entries(value as Record<string, unknown>);
  if (depth >= MAX_DEPTH)
    return Array.isArray(value) ? `<array of ${entries.length}>` : `<object of ${entries.length} keys>`;
  const more = entries.length > MAX_ITEMS ? [`…${entries.length - MAX_ITEMS} more`] : [];
  const parts = entries
    .slice(0, MAX_ITEMS)
    .map(([k, v]) =>
      Array.isArray(value)
        ? show(v, secrets, depth + 1)
        : `${maskSecrets(k, secrets)}: ${show(v, secrets, depth + 1)}`,
    );
  const inner = [...parts, ...more].join(", ");
  return Array.isArray(value) ? `[${inner}]` : `{${inner}}`;
}

/**
 * Names of config keys whose string values are secrets (`botToken`, `apiKey`, `webhookSecret`, `password`, `key`);
 * not `mainKey` or `sessionKey`, which name sessions.
 */
const SECRET_KEY = /(?:token|tokens|apikey|api_key|secret|secrets|password|passwd|privatekey|^key)$/i;
/** Names of environment variables whose values are secrets. */
const SECRET_ENV = /(?:_KEY|_TOKEN|_SECRET)$/i;

/**
 * Every secret value the log must never show: the string values under secret-named keys anywhere in the config
 * (the core's and every plugin's section), the `extra` ones (the gateway token), and the values of environment
 * variables named `*_KEY`, `*_TOKEN` or `*_SECRET`. Values shorter than MIN_SECRET_LENGTH are left out.
 */
export function secretValues(
  config: unknown,
  env: Readonly<Record<string, string | undefined>>,
  extra: readonly string[] = [],
): string[] {
  const found = new Set<string>();
  const add = (value: string) => {
    if (value.length >= MIN_SECRET_LENGTH) found.add(value);
  };
  const walk = (value: unknown, secretKey: boolean, depth: number) => {
    if (depth > 12) return;
    if (typeof value === "string") {
      if (secretKey) add(value);
      return;
    }
    if (Array.isArray(value)) {
      for (const item of value) walk(item, secretKey, depth + 1);
      return;
    }
    if (typeof value === "object" && value !== null) {
      for (const [key, child] of Object.entries(value)) walk(child, SECRET_KEY.test(key), depth + 1);
    }
  };
  walk(config, false, 0);
  for (const value of extra) add(value);
  for (const [name, value] of Object.entries(env))
    if (value !== undefined && SECRET_ENV.test(name)) add(value);
  return [...found];
}
