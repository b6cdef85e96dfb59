import { type ChildProcess, spawn } from "node:child_process";
import { once } from "node:events";
import { mkdir, mkdtemp, readdir, readFile, rm, stat, utimes, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { fillDisk, mountTmpfs, unmount } from "../../test/fault/tmpfs.js";
import { createMemoryLogger } from "../core/logger.js";
import { isOwnerDead, type LockOwner, ownerForThisProcess, readLockOwner } from "./lock-owner.js";
import { SessionStore } from "./store.js";
import { LOCK_STALE_MS, lockWaitMs, withFileLock } from "./store-lock.js";

let dir: string;
let path: string;
const children: ChildProcess[] = [];

beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), "clawdis-lock-"));
  path = join(dir, "sessions", "sessions.json");
});

afterEach(async () => {
  for (const child of children.splice(0)) if (child.exitCode === null) child.kill("SIGKILL");
  await rm(dir, { recursive: true, force: true });
});

const lockModule = fileURLToPath(new URL("./store-lock.ts", import.meta.url));
const loggerModule = fileURLToPath(new URL("../core/logger.ts", import.meta.url));

/** A real child process that takes the store's lock through withFileLock, says "locked" and holds it. */
async function childHoldingTheLock(staleMs = LOCK_STALE_MS): Promise<ChildProcess> {
  const code = `
    import { withFileLock } from ${JSON.stringify(lockModule)};
    import { silentLogger } from ${JSON.stringify(loggerModule)};
    await withFileLock(${JSON.stringify(path)}, silentLogger, async () => {
      process.stdout.write("locked\\n");
      await new Promise(() => setInterval(() => {}, 1000));
    }, { staleMs: ${staleMs} });
  `;
  const child = spawn(process.execPath, ["--import", "tsx", "--input-type=module", "-e", code], {
    stdio: ["ignore", "pipe", "inherit"],
  });
  children.push(child);
  let out = "";
  await new Promise<void>((resolve, reject) => {
    child.stdout?.on("data", (chunk) => {
      out += String(chunk);
      if (out.includes("locked\n")) resolve();
    });
    child.on("exit", (exitCode) => reject(new Error(`lock holder exited early (${exitCode})`)));
  });
  return child;
}

async function killHard(child: ChildProcess): Promise<void> {
  const exited = once(child, "exit");
  child.kill("SIGKILL");
  await exited;
}

describe("the store lock records its owner", () => {
  it("writes owner.json (0600) into the lock directory (0700) while held, and removes both after", async () => {
    const previous = process.umask(0o022);
    try {
      const { logger } = createMemoryLogger();
      await withFileLock(path, logger, async () => {
        const owner = await readLockOwner(`${path}.lock`);
        expect(owner).toMatchObject({ pid: process.pid });
        expect((await stat(`${path}.lock`)).mode & 0o777).toBe(0o700);
        expect((await stat(join(`${path}.lock`, "owner.json"))).mode & 0o777).toBe(0o600);
        expect((await stat(join(dir, "sessions"))).mode & 0o777).toBe(0o700);
      });
      expect(await readdir(join(dir, "sessions"))).toEqual([]);
    } finally {
      process.umask(previous);
    }
  });

  it("a holder whose lock was taken over meanwhile writes nothing and leaves the new holder's lock alone", async () => {
    const { logger } = createMemoryLogger();
    const other = { ...ownerForThisProcess(Date.now()), pid: 1, token: "someone-else" };
    await withFileLock(path, logger, async (lock) => {
      await lock.assertHeld();
      await writeFile(join(`${path}.lock`, "owner.json"), JSON.stringify(other));
      await expect(lock.assertHeld()).rejects.toMatchObject({ code: "STORE_LOCKED" });
    });
    expect(await readLockOwner(`${path}.lock`)).toMatchObject({ token: "someone-else" });
  });

  it("fails with IO on a full disk and leaves neither the directory nor a half-written record behind", async () => {
    // A tmpfs with no page free: the lock directory and owner.json are made (they take no page), writing the
    // record is refused (ENOSPC). A lock left behind without a readable owner would block others until stale.
    const mount = join(dir, "full");
    await mkdir(mount);
    await mountTmpfs(mount, 64 * 1024);
    try {
      await fillDisk(join(mount, "filler"));
      const { logger } = createMemoryLogger();
      let ran = false;
      const locking = withFileLock(join(mount, "sessions.json"), logger, async () => {
        ran = true;
      });
      await expect(locking).rejects.toMatchObject({ code: "IO", message: expect.stringContaining("ENOSPC") });
      expect(ran).toBe(false);
      expect(await readdir(mount)).toEqual(["filler"]);
    } finally {
      await unmount(mount);
    }
  });

  it("waits longer for a lock than a lock takes to go stale", () => {
    expect(lockWaitMs(LOCK_STALE_MS)).toBeGreaterThan(LOCK_STALE_MS);
    expect(lockWaitMs(2000)).toBeGreaterThan(2000);
  });
});

describe("isOwnerDead", () => {
  const me = (): LockOwner => ownerForThisProcess(Date.now());

  it("is false for this process, and for a process that runs", async () => {
    expect(isOwnerDead(me())).toBe(false);
    const child = await childHoldingTheLock();
    const owner = await readLockOwner(`${path}.lock`);
    expect(owner?.pid).toBe(child.pid);
    expect(isOwnerDead(owner as LockOwner)).toBe(false);
    await killHard(child);
    expect(isOwnerDead(owner as LockOwner)).toBe(true);
  });

  it("is true for a running pid with another start time (the pid was reused)", () => {
    const owner = me();
    expect(owner.start).toMatch(/^\d+$/);
    expect(isOwnerDead({ ...owner, start: `${owner.start}1` })).toBe(true);
  });

  it("cannot judge (false) an owner on another host, boot or pid namespace", async () => {
    const child = await childHoldingTheLock();
    const owner = (await readLockOwner(`${path}.lock`)) as LockOwner;
    await killHard(child);
    expect(isOwnerDead(owner)).toBe(true);
    expect(isOwnerDead({ ...owner, host: `${owner.host}-elsewhere` })).toBe(false);
    expect(isOwnerDead({ ...owner, bootId: "another-boot" })).toBe(false);
    expect(isOwnerDead({ ...owner, pidNamespace: "pid:[1]" })).toBe(false);
    expect(isOwnerDead({ ...owner, pid: 0 })).toBe(false);
  });
});

describe("a lock left behind", () => {
  it("by a process killed with SIGKILL is taken over at once (the mtime rule would take 10 minutes)", async () => {
    const child = await childHoldingTheLock();
    await killHard(child);
    expect(await readLockOwner(`${path}.lock`)).toMatchObject({ pid: child.pid });
    const { logger, lines } = createMemoryLogger();
    const store = new SessionStore({ path, logger, lockStaleMs: 600_000 });
    expect(await store.update("main", () => ({ sessionId: "s-1", updatedAt: 1 }))).toMatchObject({
      sessionId: "s-1",
    });
    expect(JSON.parse(await readFile(path, "utf8")).main.sessionId).toBe("s-1");
    expect(lines.some((l) => l.level === "warn" && l.message.includes(`process ${child.pid}`))).toBe(true);
    // Nothing of the dead lock is left: no lock directory, no renamed copy of it.
    expect((await readdir(join(dir, "sessions"))).sort()).toEqual(["sessions.json"]);
  });

  it("without an owner record (an older clawdis, or a bare mkdir) is taken over once its mtime is stale", async () => {
    await mkdir(`${path}.lock`, { recursive: true });
    const old = (Date.now() - LOCK_STALE_MS - 60_000) / 1000;
    await utimes(`${path}.lock`, old, old);
    const { logger } = createMemoryLogger();
    const store = new SessionStore({ path, logger });
    expect(await store.update("main", () => ({ sessionId: "s-1", updatedAt: 1 }))).toMatchObject({
      sessionId: "s-1",
    });
  });

  it("without an owner record and still fresh: the update waits for it to go stale and succeeds", async () => {
    await mkdir(`${path}.lock`, { recursive: true });
    await writeFile(join(`${path}.lock`, "owner.json"), "not a record of ours");
    const { logger } = createMemoryLogger();
    // proper-lockfile's smallest stale time: the lock goes stale while the update still waits.
    const store = new SessionStore({ path, logger, lockStaleMs: 2000 });
    expect(await store.update("main", () => ({ sessionId: "s-1", updatedAt: 1 }))).toMatchObject({
      sessionId: "s-1",
    });
  });
});
