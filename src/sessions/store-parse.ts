import { quoteId, whyInvalid } from "./session-id.js";
import type { SessionEntry, SessionMap } from "./types.js";

/** An entry of the file that is not used (kept in the file as it is, never deleted by a read). */
export interface EntryProblem {
  key: string;
  reason: string;
}

export type ParsedStore =
  | {
      ok: true;
      /** The file's object exactly as parsed: every key, usable or not, in file order. */
      raw: Record<string, unknown>;
      /** The usable entries, in file order. Shares entry objects with `raw` (except repaired ones). */
      map: SessionMap;
      problems: EntryProblem[];
    }
  | { ok: false; reason: string };

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/**
 * Parses the text of `sessions.json`. The file is bad (`ok: false`) when it is not JSON, or not a JSON object
 * whose values are all objects. Inside an entry the reader is lenient: unknown fields are kept; an entry whose
 * `sessionId` is missing or not a valid id is left out of `map` (reported in `problems`); an `updatedAt` that is
 * not a number reads as 0 (also reported).
 */
export function parseStoreText(text: string): ParsedStore {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    return {
      ok: false,
      reason: text.trim().length === 0 ? "the file is empty" : `not valid JSON (${message})`,
    };
  }
  if (!isPlainObject(value)) {
    const kind = value === null ? "null" : Array.isArray(value) ? "an array" : typeof value;
    return { ok: false, reason: `expected a JSON object of sessionKey -> entry, found ${kind}` };
  }
  for (const [key, entry] of Object.entries(value)) {
    if (!isPlainObject(entry)) {
      const kind = entry === null ? "null" : Array.isArray(entry) ? "an array" : typeof entry;
      return { ok: false, reason: `the value of key ${quoteId(key)} is ${kind}, not an object` };
    }
  }
  const { map, problems } = usableEntries(value as Record<string, Record<string, unknown>>);
  return { ok: true, raw: value, map, problems };
}

/** The entries of a parsed store that the gateway may use (see parseStoreText). */
export function usableEntries(raw: Record<string, Record<string, unknown>>): {
  map: SessionMap;
  problems: EntryProblem[];
} {
  const map: SessionMap = {};
  const problems: EntryProblem[] = [];
  for (const key of Object.keys(raw)) {
    const entry = raw[key]!;
    const why = whyInvalid(entry.sessionId);
    if (why !== undefined) {
      problems.push({ key, reason: `sessionId ${quoteId(entry.sessionId)} is refused: ${why}` });
      continue;
    }
    if (typeof entry.updatedAt === "number" && Number.isFinite(entry.updatedAt)) {
      map[key] = entry as SessionEntry;
    } else {
      problems.push({
        key,
        reason: `updatedAt ${JSON.stringify(entry.updatedAt) ?? "undefined"} is not a number; read as 0`,
      });
      map[key] = { ...entry, sessionId: entry.sessionId as string, updatedAt: 0 };
    }
  }
  return { map, problems };
}

/** The file text the gateway writes: pretty-printed with 2 spaces and a trailing newline. */
export function serializeStore(raw: Record<string, unknown>): string {
  return `${JSON.stringify(raw, null, 2)}\n`;
}
