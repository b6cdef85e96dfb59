import { execFileSync } from "node:child_process";
import { mkdir, mkdtemp, open, rename, rm, rmdir } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { done, startTestGateway, type TestGateway } from "./helpers/gateway-harness.js";

/** Fills the file system of `dir` until it refuses more (ENOSPC); returns the filler to delete later. */
async function fillDisk(dir: string): Promise<string> {
  const filler = join(dir, "filler");
  const handle = await open(filler, "w");
  try {
    // Big blocks first, then smaller ones, until not one byte more fits.
    for (const size of [16 * 1024, 512, 1]) {
      const block = Buffer.alloc(size);
      try {
        for (;;) await handle.write(block);
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== "ENOSPC") throw error;
      }
    }
  } finally {
    await handle.close();
  }
  return filler;
}

/**
 * Faults in the bookkeeping around a turn (issue 6, D6 and D8): a store that cannot be written after the turn
 * does not cost the reply; a full disk keeps an accepted message and answers it once space is back.
 */
describe("gateway: faults around a turn", () => {
  let t: TestGateway | undefined;
  const mounts: string[] = [];
  afterEach(async () => {
    await t?.close();
    t = undefined;
    for (const dir of mounts.splice(0)) {
      execFileSync("umount", [dir]);
      await rm(dir, { recursive: true, force: true });
    }
  });

  it("a store update that fails after the turn still delivers the reply, and is retried", async () => {
    t = await startTestGateway();
    await done(await t.chat.inject({ text: "first" }));
    const store = t.gateway.store.path;
    t.fake.setDefault(async (body) => {
      // While the model answers, the store becomes unwritable (a directory stands where the file was).
      await rename(store, `${store}.away`);
      await mkdir(store);
      const last = body.messages.at(-1);
      return { text: `echo: ${String(last?.content)}` };
    });
    const outcome = await done(await t.chat.inject({ text: "second" }));
    expect(outcome.stopReason).toBe("end");
    expect(t.chat.textsTo("c-alice")).toContain("echo: second");
    await t.idle();
    expect(t.logs.some((l) => l.message.includes("could not record the turn") && l.level === "warn")).toBe(
      true,
    );
    // The store is back: the next try records the turn.
    await rmdir(store);
    await rename(`${store}.away`, store);
    // (The turn's exchange time is when it ended, not when the retry wrote it: the retry shows in its usage.)
    const before = (await t.gateway.store.get("main"))!.inputTokens ?? 0;
    t.clock.advance(1000);
    await expect
      .poll(async () => (await t!.gateway.store.get("main"))!.inputTokens ?? 0)
      .toBeGreaterThan(before);
  });

  it("a full disk keeps an accepted message; once space is back it is answered, once", async () => {
    const disk = await mkdtemp(join(tmpdir(), "clawdis-fulldisk-"));
    // A small file system of its own for the store and transcripts (the journal stays on the normal disk).
    execFileSync("mount", ["-t", "tmpfs", "-o", "size=512k", "tmpfs", disk]);
    mounts.push(disk);
    t = await startTestGateway({ storePath: join(disk, "sessions", "sessions.json") });
    await done(await t.chat.inject({ text: "warm up" }));
    const filler = await fillDisk(disk);
    // Longer than the free room in the transcript's last page, so the append needs space the disk does not have.
    const text = `while the disk is full ${"x".repeat(10_000)}`;
    const kept = await done(await t.chat.inject({ text }));
    expect(kept.stopReason).toBe("error");
    expect(kept.payloads[0]!.text).toContain("kept and will be answered");
    expect(t.gateway.journal.openCount()).toBe(1);
    await rm(filler);
    t.clock.advance(1000);
    await t.chat.waitForSent(2);
    await expect.poll(() => t!.gateway.journal.openCount()).toBe(0);
    expect(t.chat.textsTo("c-alice").join("")).toContain(`echo: ${text}`.slice(0, 200));
    const users = (await t.transcript())
      .filter((m) => m.message.role === "user")
      .map((m) => m.message.content);
    expect(users.filter((c) => c === text)).toHaveLength(1);
    const finals = (await t.transcript()).filter((m) => m.message.role === "assistant");
    expect(finals.map((m) => m.message.content).filter((c) => c === `echo: ${text}`)).toHaveLength(1);
  });
});
