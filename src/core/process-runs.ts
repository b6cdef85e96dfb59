import { readFileSync } from "node:fs";

/**
 * Whether `pid` runs on this host: it exists (a signal 0 reaches it, or is refused with EPERM: it runs under
 * another user) and, on Linux, is not a zombie (an exited process its parent has not reaped yet). A pid that is
 * not a positive integer runs nowhere.
 */
export function processRuns(pid: number): boolean {
  if (!Number.isInteger(pid) || pid <= 0) return false;
  try {
    process.kill(pid, 0);
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === "EPERM";
  }
  try {
    // `/proc/<pid>/stat`: "pid (comm) S …"; the state letter follows the last ")".
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    return stat.slice(stat.lastIndexOf(")") + 2, stat.lastIndexOf(")") + 3) !== "Z";
  } catch {
    // No /proc (not Linux): the signal said it exists.
    return true;
  }
}
