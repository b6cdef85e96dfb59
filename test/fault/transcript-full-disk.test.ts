import { mkdir, mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { appendTranscript } from "../../src/sessions/transcript.js";
import { TranscriptWriter } from "../../src/sessions/transcript-writer.js";
import type { TranscriptEntry, TranscriptHeader } from "../../src/sessions/types.js";
import { fillDisk, mountTmpfs, unmount } from "./tmpfs.js";

const header: TranscriptHeader = {
  type: "session",
  version: 1,
  id: "s1",
  sessionKey: "main",
  createdAt: "2026-12-07T00:00:00.000Z",
};
const message = (id: string, content: string): TranscriptEntry =>
  ({
    type: "message",
    id,
    ts: "2026-12-07T00:00:00.000Z",
    message: { role: "user", content },
  }) as TranscriptEntry;

/**
 * An append the disk cuts short is taken back (transcript.ts `appendAll`): on a full tmpfs a write fills the slack
 * of the file's last page and fails with ENOSPC in the middle of a line; the file is left as it was before the
 * append, and the next append, once there is space, adds whole lines only.
 */
describe("a transcript append on a full disk", () => {
  let base = "";
  let mount = "";
  afterAll(async () => {
    if (mount) await unmount(mount);
    if (base) await rm(base, { recursive: true, force: true });
  });

  it("fails with ENOSPC and leaves no line cut short, through a held writer and by path", async () => {
    base = await mkdtemp(join(tmpdir(), "clawdis-transcript-full-"));
    mount = join(base, "mnt");
    await mkdir(mount);
    await mountTmpfs(mount, 256 * 1024);
    const held = join(mount, "held.jsonl");
    const byPath = join(mount, "by-path.jsonl");
    const writer = TranscriptWriter.openSync(held);
    await writer.append([message("m1", "hello")], { header, fsync: false });
    await appendTranscript(byPath, [message("m1", "hello")], { header, fsync: false });
    const before = { held: await readFile(held, "utf8"), byPath: await readFile(byPath, "utf8") };
    const filler = join(mount, "filler");
    await fillDisk(filler);
    // Bigger than the slack of the file's last page: part of it fits, the rest does not.
    const big = message("m2", "x".repeat(9000));
    await expect(writer.append([big], { header, fsync: false })).rejects.toMatchObject({ code: "ENOSPC" });
    await expect(appendTranscript(byPath, [big], { header, fsync: false })).rejects.toMatchObject({
      code: "ENOSPC",
    });
    expect(await readFile(held, "utf8")).toBe(before.held);
    expect(await readFile(byPath, "utf8")).toBe(before.byPath);
    await rm(filler);
    await writer.append([message("m3", "again")], { header, fsync: false });
    await appendTranscript(byPath, [message("m3", "again")], { header, fsync: false });
    for (const path of [held, byPath]) {
      const lines = (await readFile(path, "utf8")).split("\n").filter((l) => l.length > 0);
      expect(lines.map((l) => (JSON.parse(l) as { id?: string }).id)).toEqual(["s1", "m1", "m3"]);
    }
    await writer.close();
  });
});
