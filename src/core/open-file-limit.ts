import { readFileSync } from "node:fs";

/**
 * The soft limit on open files of this process, from `/proc/self/limits` (Linux; read after Node raised the soft
 * limit to the hard one at start): `Infinity` for "unlimited", undefined where it cannot be read (other systems,
 * no procfs). Never throws.
 */
export function openFileLimit(
  read: () => string = () => readFileSync("/proc/self/limits", "utf8"),
): number | undefined {
  let text: string;
  try {
    text = read();
  } catch {
    return undefined;
  }
  const match = /^Max open files\s+(\d+|unlimited)\s/m.exec(text);
  if (!match) return undefined;
  return match[1] === "unlimited" ? Number.POSITIVE_INFINITY : Number(match[1]);
}
