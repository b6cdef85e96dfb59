import { randomBytes } from "node:crypto";
import { readFileSync, readlinkSync } from "node:fs";
import { readFile } from "node:fs/promises";
import { hostname } from "node:os";
import { join } from "node:path";

/**
 * Who holds a lock directory: `<lock dir>/owner.json`, written (0600, exclusive create) right after the
 * directory is made. It lets a waiting process tell a lock left by a killed process from a live one at once,
 * instead of waiting for the lock's mtime to go stale.
 */
export interface LockOwner {
  pid: number;
  /** `os.hostname()`: a pid means something only on the host that wrote it. */
  host: string;
  /** `/proc/sys/kernel/random/boot_id` (Linux): pids restart at every boot. */
  bootId?: string;
  /** `readlink /proc/self/ns/pid` (Linux): two containers on one host have separate pid spaces. */
  pidNamespace?: string;
  /** Field 22 of `/proc/<pid>/stat` (start time since boot, Linux): a reused pid has a different one. */
  start?: string;
  /** Random, per acquisition: tells this holder's lock from a later one of the same process. */
  token: string;
  /** Epoch ms when the holder asked for the lock (for people reading the file). */
  since: number;
}

export const OWNER_FILE = "owner.json";

interface HostIdentity {
  host: string;
  bootId: string | undefined;
  pidNamespace: string | undefined;
  /** This process's start marker. */
  start: string | undefined;
}

let here: HostIdentity | undefined;

function hostIdentity(): HostIdentity {
  here ??= {
    host: hostname(),
    bootId: readTrimmed("/proc/sys/kernel/random/boot_id"),
    pidNamespace: readLink("/proc/self/ns/pid"),
    start: processStart(process.pid),
  };
  return here;
}

/** The owner record of this process for a new acquisition. */
export function ownerForThisProcess(now: number): LockOwner {
  const { host, bootId, pidNamespace, start } = hostIdentity();
  return {
    pid: process.pid,
    host,
    ...(bootId ? { bootId } : {}),
    ...(pidNamespace ? { pidNamespace } : {}),
    ...(start ? { start } : {}),
    token: randomBytes(8).toString("hex"),
    since: now,
  };
}

/** The owner record in `lockDir`, or undefined when there is none or it is not a record we wrote. */
export async function readLockOwner(lockDir: string): Promise<LockOwner | undefined> {
  let text: string;
  try {
    text = await readFile(join(lockDir, OWNER_FILE), "utf8");
  } catch {
    return undefined;
  }
  return parseOwner(text);
}

/** The token of the owner record in `lockDir`, read synchronously (for the exit handler), or undefined. */
export function readLockTokenSync(lockDir: string): string | undefined {
  try {
    return parseOwner(readFileSync(join(lockDir, OWNER_FILE), "utf8"))?.token;
  } catch {
    return undefined;
  }
}

function parseOwner(text: string): LockOwner | undefined {
  try {
    const value = JSON.parse(text) as Partial<LockOwner>;
    if (
      typeof value === "object" &&
      value !== null &&
      Number.isInteger(value.pid) &&
      typeof value.host === "string" &&
      typeof value.token === "string"
    ) {
      return value as LockOwner;
    }
  } catch {
    // Not ours (or cut short): undefined.
  }
  return undefined;
}

/**
 * True only when the owner is certainly gone: it ran on this host, in this boot and in this pid namespace (as
 * far as each is known on both sides), and its pid is not running, or runs with a different start time (the
 * pid was reused). Anything that cannot be judged (another host, another container, no /proc) is false: the
 * lock's mtime rule decides then.
 */
export function isOwnerDead(owner: LockOwner): boolean {
  const local = hostIdentity();
  if (owner.host !== local.host) return false;
  // Equal, or unknown on both sides; one side known and the other not means different kinds of host.
  if (owner.bootId !== local.bootId || owner.pidNamespace !== local.pidNamespace) return false;
  if (!Number.isInteger(owner.pid) || owner.pid <= 0) return false;
  try {
    process.kill(owner.pid, 0);
  } catch (error) {
    // EPERM: the pid runs under another user, so it is alive.
    return (error as NodeJS.ErrnoException).code === "ESRCH";
  }
  if (owner.start === undefined) return false;
  const start = processStart(owner.pid);
  return start !== undefined && start !== owner.start;
}

/** Field 22 of `/proc/<pid>/stat`, or undefined off Linux. */
function processStart(pid: number): string | undefined {
  const stat = readTrimmed(`/proc/${pid}/stat`);
  if (stat === undefined) return undefined;
  // The command name (field 2) is in parentheses and may contain spaces: count fields after the last ')'.
  return stat.slice(stat.lastIndexOf(")") + 2).split(" ")[19];
}

function readTrimmed(path: string): string | undefined {
  try {
    return readFileSync(path, "utf8").trim() || undefined;
  } catch {
    return undefined;
  }
}

function readLink(path: string): string | undefined {
  try {
    return readlinkSync(path);
  } catch {
    return undefined;
  }
}
