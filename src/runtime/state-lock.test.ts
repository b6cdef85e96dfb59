import { spawnSync } from "node:child_process";
import { mkdtemp, readFile, rename, rm, stat, utimes, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { waitWithDeadline } from "../../test/helpers/wait-deadline.js";
import { ownerForThisProcess } from "../sessions/lock-owner.js";
import { isOwnerAlive, reap, StateLock, stateLockPath, stateOwnerOf } from "./state-lock.js";

/** An owner record as another process on this host would write it. */
function ownerRecord(fields: Record<string, unknown>): string {
  return JSON.stringify({ ...ownerForThisProcess(1), kind: "gateway", ...fields });
}

/** A pid that certainly belonged to a process that has exited. */
function deadPid(): number {
  const child = spawnSync(process.execPath, ["-e", "process.stdout.write(String(process.pid))"]);
  return Number(child.stdout.toString());
}

describe("StateLock", () => {
  let dir: string;
  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), "clawdis-statelock-"));
  });
  afterEach(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  const take = (kind: "gateway" | "agent" = "gateway", port?: number) =>
    StateLock.tryAcquire(dir, { kind, now: 1, ...(port !== undefined ? { port } : {}) });

  it("is held by one owner at a time, and says who holds it", async () => {
    const first = await take("gateway", 18789);
    expect(first.ok).toBe(true);
    const second = await take("agent");
    expect(second).toMatchObject({ ok: false, holder: { pid: process.pid, kind: "gateway", port: 18789 } });
    expect((await stat(stateLockPath(dir))).mode & 0o777).toBe(0o600);
    if (first.ok) await first.lock.release();
    expect((await take("agent")).ok).toBe(true);
  });

  it("of many taking it at once, exactly one gets it", async () => {
    const results = await Promise.all(Array.from({ length: 12 }, () => take()));
    expect(results.filter((r) => r.ok)).toHaveLength(1);
  });

  it("takes over at once a lock whose owner is dead, also when many try at once", async () => {
    // Many rounds: a takeover that moves a live lock aside, even for a moment, lets a third taker win as well.
    // One dead pid for all rounds: were it reused meanwhile, the record's start time would still mark it dead.
    const pid = deadPid();
    for (let round = 0; round < 40; round++) {
      await writeFile(stateLockPath(dir), ownerRecord({ pid, token: `dead-${round}` }));
      const results = await Promise.all(Array.from({ length: 8 }, () => take()));
      const winners = results.filter((r) => r.ok);
      expect(winners).toHaveLength(1);
      const holder = JSON.parse(await readFile(stateLockPath(dir), "utf8"));
      expect(winners[0]!.ok && holder.token === winners[0]!.lock.info.token).toBe(true);
      if (winners[0]!.ok) await winners[0]!.lock.release();
    }
  });

  it("the reaper removes only the dead owner's file: a live lock put in place after its first read survives", async () => {
    const path = stateLockPath(dir);
    await writeFile(path, ownerRecord({ pid: deadPid(), token: "dead-one" }));
    // Between the reaper's first read and its guarded re-read, the dead lock went and a live owner took the path.
    const live = ownerRecord({ kind: "agent", token: "live-one" });
    const reaped = await reap(path, "dead-one", {
      guardTaken: async () => {
        await rm(path);
        await writeFile(path, live);
      },
    });
    expect(reaped).toBe(true);
    // Read as "(no file)" when gone, so a reaper that removes the live lock fails here by assertion.
    expect(await readFile(path, "utf8").catch(() => "(no file)")).toBe(live);
    expect(await take()).toMatchObject({ ok: false, holder: { token: "live-one", kind: "agent" } });
  });

  it("a reaping guard left by a reaper that died mid-reap does not block the takeover for long", async () => {
    await writeFile(stateLockPath(dir), ownerRecord({ pid: deadPid(), token: "dead-one" }));
    const guard = `${stateLockPath(dir)}.reaping`;
    await writeFile(guard, "");
    // Fresh: someone reaps right now, so this attempt does not (it reports the holder it found).
    expect((await take()).ok).toBe(false);
    const old = new Date(Date.now() - 10_000);
    await utimes(guard, old, old);
    expect((await take()).ok).toBe(true);
  });

  it("takes over a lock whose pid now belongs to another (younger) process", async () => {
    await writeFile(stateLockPath(dir), ownerRecord({ start: "1", token: "reused" }));
    expect(isOwnerAlive({ ...ownerForThisProcess(1), kind: "gateway", start: "1" })).toBe(false);
    expect((await take()).ok).toBe(true);
  });

  it("leaves a just-created unreadable lock alone, and takes over an old one", async () => {
    const path = stateLockPath(dir);
    await writeFile(path, "");
    expect((await stat(path)).size).toBe(0);
    const old = new Date(Date.now() - 60_000);
    await utimes(path, old, old);
    expect((await take()).ok).toBe(true);
  });

  it("release removes only its own lock", async () => {
    const first = await take();
    if (!first.ok) throw new Error("not taken");
    // Someone replaced the file (a second process that reaped it by mistake): release must not remove theirs.
    await writeFile(`${dir}/other`, ownerRecord({ kind: "agent", token: "theirs" }));
    await rename(`${dir}/other`, stateLockPath(dir));
    await first.lock.release();
    expect(JSON.parse(await readFile(stateLockPath(dir), "utf8")).token).toBe("theirs");
  });

  it("watch tells the owner when the file is no longer its own", async () => {
    const first = await take();
    if (!first.ok) throw new Error("not taken");
    const lost = waitWithDeadline<string>("the watch to report the lock lost", 5_000, (resolve) => {
      first.lock.watch(resolve, 10);
      return () => {};
    });
    await rm(stateLockPath(dir));
    expect(await lost).toMatch(/removed or replaced/);
  });

  it("update rewrites the owner file with the URL; stateOwnerOf reads a live owner only", async () => {
    const first = await take("gateway", 0);
    if (!first.ok) throw new Error("not taken");
    await first.lock.update({ url: "http://127.0.0.1:4321", port: 4321 });
    expect(await stateOwnerOf(dir)).toMatchObject({
      kind: "gateway",
      url: "http://127.0.0.1:4321",
      port: 4321,
    });
    await first.lock.release();
    expect(await stateOwnerOf(dir)).toBeUndefined();
    await writeFile(stateLockPath(dir), ownerRecord({ pid: deadPid(), token: "x" }));
    expect(await stateOwnerOf(dir)).toBeUndefined();
  });
});
