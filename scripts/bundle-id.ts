import { createHash } from "node:crypto";

/**
 * A bundle's last line is `//# clawdis-bundle <id>`, the SHA-1 of the text before it, and its code cache starts
 * with the same id: V8 checks only the length of the source a cache was made from, so a cache of another bundle
 * of the same length would run that bundle's code. (bin/clawdis.js reads the id the same way.)
 */
export const ID_PREFIX = "//# clawdis-bundle ";

/** The id line that ends a bundle whose text before it is `body`. */
export function bundleIdLine(body: string): string {
  return `${ID_PREFIX}${createHash("sha1").update(body).digest("hex")}\n`;
}

/** The id a bundle's text ends with, or undefined. */
export function bundleId(text: string): string | undefined {
  const at = text.lastIndexOf(ID_PREFIX);
  if (at < 0) return undefined;
  return text.slice(at + ID_PREFIX.length).trim() || undefined;
}
