import { readdirSync, readlinkSync } from "node:fs";

/**
 * How many of this process's descriptors are open on `file` (absolute), read from `/proc/self/fd`; a descriptor
 * on a file deleted since shows as "<file> (deleted)" and counts too. Linux only.
 */
export function descriptorsOn(file: string): number {
  let count = 0;
  for (const fd of readdirSync("/proc/self/fd")) {
    let target = "";
    try {
      target = readlinkSync(`/proc/self/fd/${fd}`);
    } catch {} // the directory's own descriptor, closed once listed
    if (target === file || target === `${file} (deleted)`) count++;
  }
  return count;
}
