import { randomUUID } from "node:crypto";

/**
 * A session id becomes a file name (`<store dir>/<sessionId>.jsonl`, session-paths.ts), so only these characters are accepted.
 * No `/`, no `\`, no NUL, and at most 128 characters: a hand-edited id can never point outside the store dir
 * (even `..` is harmless: it becomes the file `...jsonl`).
 */
export const SESSION_ID_PATTERN = /^[A-Za-z0-9._-]{1,128}$/;

/** Why `id` cannot be used as a session id, or undefined when it can. */
export function whyInvalid(id: unknown): string | undefined {
  if (typeof id !== "string") return `it is ${id === null ? "null" : typeof id}, not a string`;
  if (id.length === 0) return "it is empty";
  if (id.length > 128) return `it is ${id.length} characters long (at most 128)`;
  if (!SESSION_ID_PATTERN.test(id)) {
    if (id.includes("/") || id.includes("\\")) return "it contains a path separator";
    if (id.includes("\0")) return "it contains a NUL character";
    return "it contains characters other than letters, digits, '.', '_' and '-'";
  }
  return undefined;
}

export function isValidSessionId(id: unknown): id is string {
  return whyInvalid(id) === undefined;
}

/** A fresh random session id (a UUID, which always matches SESSION_ID_PATTERN). */
export function newSessionId(): string {
  return randomUUID();
}

/** A printable rendering of an id for messages: JSON-quoted, cut after 60 characters. */
export function quoteId(id: unknown): string {
  const text = typeof id === "string" ? id : String(id);
  const cut = text.length > 60 ? `${text.slice(0, 60)}…` : text;
  return JSON.stringify(cut);
}
