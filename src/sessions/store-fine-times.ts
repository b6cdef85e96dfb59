import { randomBytes } from "node:crypto";
import { closeSync, fstatSync, openSync, unlinkSync, writeSync } from "node:fs";
import { join } from "node:path";

/** Changes made in the probe, each right after the change time was read. */
const PROBE_CHANGES = 8;
/** The probe must take less than this, or it says nothing (a clock tick is at least 1 ms: Linux HZ <= 1000). */
const PROBE_WITHIN_NS = 400_000n;

/**
 * Whether the file system of `dir` gives every change a change time (ctime) of its own, different from the one
 * last read, also when both fall in one tick of the coarse clock file times usually come from (Linux 6.13+
 * "multigrain" timestamps: ext4, xfs, btrfs, tmpfs). Then a version whose ctime was read cannot be changed
 * without its ctime changing, and an unchanged (ino, size, mtime, ctime) proves the bytes are the ones read.
 *
 * Found out, not assumed: a temp file in `dir` is changed PROBE_CHANGES times in a row, each time right after its
 * ctime was read, and every ctime must be new, all within a fraction of a tick (so a coarse clock cannot pass
 * by chance; a probe that took longer is tried again). Anything else, an error included, answers false, and
 * the store keeps its slower, safe rule.
 */
export function changeTimesAreFine(
  dir: string,
  once: (dir: string) => "fine" | "coarse" | "too slow" = probe,
): boolean {
  for (let attempt = 1; attempt <= PROBE_ATTEMPTS; attempt++) {
    const found = once(dir);
    if (found !== "too slow") return found === "fine";
  }
  return false;
}

/** How often a probe that took too long (the process was preempted) is tried again. */
const PROBE_ATTEMPTS = 3;

/**
 * The verdict on one probe: `ctimes` read after each change (the first before any), `elapsedNs` its duration.
 * Fine only when every change got a ctime after the one before, within PROBE_WITHIN_NS. Pure.
 */
export function judgeChangeTimes(
  ctimes: readonly bigint[],
  elapsedNs: bigint,
): "fine" | "coarse" | "too slow" {
  if (ctimes.length < PROBE_CHANGES + 1) return "coarse";
  for (let i = 1; i < ctimes.length; i++) if (ctimes[i]! <= ctimes[i - 1]!) return "coarse";
  return elapsedNs < PROBE_WITHIN_NS ? "fine" : "too slow";
}

function probe(dir: string): "fine" | "coarse" | "too slow" {
  const path = join(dir, `.sessions.json.times-${process.pid}-${randomBytes(4).toString("hex")}`);
  let fd: number;
  try {
    fd = openSync(path, "wx", 0o600);
  } catch {
    return "coarse";
  }
  try {
    const byte = Buffer.from("x");
    const start = process.hrtime.bigint();
    const ctimes = [fstatSync(fd, { bigint: true }).ctimeNs];
    for (let i = 0; i < PROBE_CHANGES; i++) {
      writeSync(fd, byte, 0, 1, 0);
      ctimes.push(fstatSync(fd, { bigint: true }).ctimeNs);
    }
    return judgeChangeTimes(ctimes, process.hrtime.bigint() - start);
  } catch {
    return "coarse";
  } finally {
    closeSync(fd);
    try {
      unlinkSync(path);
    } catch {
      // Gone already: nothing to clean up.
    }
  }
}
