import { mkdir, mkdtemp, readdir, readFile, rm, stat, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { fillDisk, mountTmpfs, unmount } from "../../test/fault/tmpfs.js";
import { writeFileAtomic, writePiecesAtomic } from "./store-write.js";

let dir: string;

beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), "clawdis-store-write-"));
});

afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe("writePiecesAtomic", () => {
  it("replaces the file with the pieces' concatenation (0600), leaving nothing else behind", async () => {
    const path = join(dir, "sessions.json");
    await writeFile(path, "old");
    const pieces = ["{\n", "", '  "a": 1', "\n}\n"].map((p) => Buffer.from(p));
    let seen: { size?: bigint; stamped?: boolean } = {};
    await writePiecesAtomic(path, pieces, {
      stamp: true,
      renamed: (version, stamped) => {
        seen = { size: version?.size, stamped };
      },
    });
    expect(await readFile(path, "utf8")).toBe('{\n  "a": 1\n}\n');
    expect((await stat(path)).mode & 0o777).toBe(0o600);
    // The version handed over is the renamed file's, and this file system keeps the stamp exactly.
    expect(seen).toEqual({ size: 13n, stamped: true });
    expect(await readdir(dir)).toEqual(["sessions.json"]);
  });

  it("abandons the write when the check before the rename throws: the file as it was, no temp file", async () => {
    const path = join(dir, "sessions.json");
    await writeFile(path, "old");
    const write = writeFileAtomic(path, "new", undefined, () => {
      throw new Error("someone else wrote");
    });
    await expect(write).rejects.toThrow("someone else wrote");
    expect(await readFile(path, "utf8")).toBe("old");
    expect(await readdir(dir)).toEqual(["sessions.json"]);
  });

  it("on a full disk fails with ENOSPC, and leaves the file as it was and no temp file", async () => {
    const mount = join(dir, "full");
    await mkdir(mount);
    await mountTmpfs(mount, 64 * 1024);
    try {
      const path = join(mount, "sessions.json");
      await writeFile(path, "old");
      await fillDisk(join(mount, "filler"));
      await expect(writeFileAtomic(path, "x".repeat(8192))).rejects.toMatchObject({ code: "ENOSPC" });
      expect(await readFile(path, "utf8")).toBe("old");
      expect((await readdir(mount)).sort()).toEqual(["filler", "sessions.json"]);
    } finally {
      await unmount(mount);
    }
  });
});
