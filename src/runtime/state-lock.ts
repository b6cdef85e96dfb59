import { type FileHandle, link, mkdir, open, readFile, rename, rm, stat, unlink } from "node:fs/promises";
import { join } from "node:path";
import { describeError } from "../core/errors.js";
import { isOwnerDead, type LockOwner, ownerForThisProcess } from "../sessions/lock-owner.js";

/**
 * One process owns a state directory: `<state>/state.lock`, a small JSON file created with O_EXCL and held for
 * the owner's whole life. Contract:
 * - it is taken before any other state file is touched (journal, store, token, workspace);
 * - a lock whose owner is certainly dead (the same host, boot and pid namespace, and no such pid, or the pid was
 *   reused by a younger process; see sessions/lock-owner.ts) is taken over at once: one process at a time
 *   reaps (it holds `state.lock.reaping`, created exclusively), reads the file again and removes it only when it
 *   is still the dead owner's; a live lock is never moved, so two takers can never both win. A reaping guard
 *   left by a reaper that died mid-reap is removed once it is REAP_GUARD_STALE_MS old;
 * - the owner re-reads the file every few seconds (`watch`) and is told when it is no longer its own;
 * - `release` removes it only when it is still its own.
 */

export type StateOwnerKind = "gateway" | "agent";

/** Who owns the state directory: the process's identity (as for the store's lock) and what it is. */
export interface StateOwner extends LockOwner {
  kind: StateOwnerKind;
  /** A gateway's configured port, and its URL once it listens. */
  port?: number;
  url?: string;
}

export type AcquireResult = { ok: true; lock: StateLock } | { ok: false; holder: StateOwner };

export function stateLockPath(stateDir: string): string {
  return join(stateDir, "state.lock");
}

export class StateLock {
  private timer: NodeJS.Timeout | undefined;
  private released = false;

  private constructor(
    readonly path: string,
    private owner: StateOwner,
  ) {}

  /**
   * One attempt to take the lock (with takeover of a dead owner's lock). Creates the state directory (0700).
   * Returns the live holder when someone else has it.
   */
  static async tryAcquire(
    stateDir: string,
    who: { kind: StateOwnerKind; port?: number; now: number },
  ): Promise<AcquireResult> {
    await mkdir(stateDir, { recursive: true, mode: 0o700 });
    const path = stateLockPath(stateDir);
    const owner: StateOwner = {
      ...ownerForThisProcess(who.now),
      kind: who.kind,
      ...(who.port !== undefined ? { port: who.port } : {}),
    };
    for (let attempt = 0; attempt < 5; attempt++) {
      if (await createExclusive(path, owner)) return { ok: true, lock: new StateLock(path, owner) };
      const holder = await readOwner(path);
      if (holder === "missing") continue;
      if (holder !== "unreadable" && isOwnerAlive(holder)) return { ok: false, holder };
      if (holder === "unreadable" && !(await olderThan(path, UNREADABLE_GRACE_MS))) {
        // Being written by a process that just created it: give it a moment.
        await delay(20);
        continue;
      }
      if (!(await reap(path, holder === "unreadable" ? undefined : holder.token))) await delay(20);
    }
    const holder = await readOwner(path);
    if (typeof holder === "object") return { ok: false, holder };
    throw new Error(`could not take ${path}: it keeps changing`);
  }

  get info(): StateOwner {
    return this.owner;
  }

  /** Rewrites the owner file (e.g. with the URL once listening); atomic, only while it is still ours. */
  async update(fields: Partial<Pick<StateOwner, "port" | "url">>): Promise<void> {
    const next = { ...this.owner, ...fields };
    if (!(await this.isOurs())) throw new Error(`${this.path} is no longer held by this process`);
    const tmp = `${this.path}.tmp-${process.pid}`;
    await writePrivate(tmp, next);
    await rename(tmp, this.path);
    this.owner = next;
  }

  /** Calls `onLost` (once) when the file stops being ours; checks every `everyMs`. */
  watch(onLost: (why: string) => void, everyMs = 2000): void {
    this.timer = setInterval(() => {
      void this.isOurs().then(
        (ours) => {
          if (ours || this.released) return;
          clearInterval(this.timer);
          onLost(`${this.path} was removed or replaced by another process`);
        },
        () => {},
      );
    }, everyMs);
    this.timer.unref();
  }

  async release(): Promise<void> {
    if (this.released) return;
    this.released = true;
    clearInterval(this.timer);
    if (await this.isOurs()) await unlink(this.path).catch(() => {});
  }

  private async isOurs(): Promise<boolean> {
    const holder = await readOwner(this.path);
    return typeof holder === "object" && holder.token === this.owner.token;
  }
}

/** The live owner of a state directory, if any (for clients and `doctor`). */
export async function stateOwnerOf(stateDir: string): Promise<StateOwner | undefined> {
  const holder = await readOwner(stateLockPath(stateDir));
  return typeof holder === "object" && isOwnerAlive(holder) ? holder : undefined;
}

/** A lock file that cannot be read is only treated as stale once it is this old (its creator may be writing). */
const UNREADABLE_GRACE_MS = 2000;

async function createExclusive(path: string, owner: StateOwner): Promise<boolean> {
  // Written to a private temp file first and linked into place: the lock file is never seen half-written.
  const tmp = `${path}.new-${owner.token}`;
  await writePrivate(tmp, owner);
  try {
    await link(tmp, path);
    return true;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "EEXIST") return false;
    throw error;
  } finally {
    await unlink(tmp).catch(() => {});
  }
}

async function writePrivate(path: string, owner: StateOwner): Promise<void> {
  const handle = await open(path, "w", 0o600);
  try {
    await handle.writeFile(`${JSON.stringify(owner)}\n`);
    await handle.sync();
  } finally {
    await handle.close();
  }
}

async function readOwner(path: string): Promise<StateOwner | "missing" | "unreadable"> {
  let text: string;
  try {
    text = await readFile(path, "utf8");
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return "missing";
    throw new Error(`cannot read ${path}: ${describeError(error)}`);
  }
  try {
    const value = JSON.parse(text) as StateOwner;
    if (typeof value.pid === "number" && typeof value.token === "string" && typeof value.host === "string")
      return value;
  } catch {
    // Falls through.
  }
  return "unreadable";
}

/** A reaping guard this old was left by a reaper that died mid-reap (a reap takes milliseconds). */
const REAP_GUARD_STALE_MS = 5000;

/** Test seam of `reap`: `guardTaken` runs once the guard is held, before the file is read again. */
export interface ReapHooks {
  guardTaken?: () => Promise<void>;
}

/**
 * Removes the stale lock whose token is `deadToken` (undefined: an unreadable file), unless another process is
 * reaping it now (then false: try again shortly). Under the guard the file is read again and removed only while
 * it is still the dead one: a lock created meanwhile (only possible once the dead one is gone) is never touched.
 * Exported for its test (a live lock put in place between the guard and the re-read survives).
 */
export async function reap(
  path: string,
  deadToken: string | undefined,
  hooks: ReapHooks = {},
): Promise<boolean> {
  const guard = `${path}.reaping`;
  let handle: FileHandle;
  try {
    handle = await open(guard, "wx", 0o600);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== "EEXIST") throw error;
    if (await olderThan(guard, REAP_GUARD_STALE_MS)) await rm(guard, { force: true });
    return false;
  }
  try {
    await handle.close();
    await hooks.guardTaken?.();
    const now = await readOwner(path);
    const isTheDeadOne =
      now === "unreadable" ? deadToken === undefined : typeof now === "object" && now.token === deadToken;
    if (isTheDeadOne) await unlink(path).catch(() => {});
    return true;
  } finally {
    await rm(guard, { force: true });
  }
}

/** Alive unless certainly dead: an owner on another host, boot or pid namespace is never taken over. */
export function isOwnerAlive(owner: StateOwner): boolean {
  return !isOwnerDead(owner);
}

async function olderThan(path: string, ms: number): Promise<boolean> {
  try {
    return Date.now() - (await stat(path)).mtimeMs > ms;
  } catch {
    return true;
  }
}

function delay(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
