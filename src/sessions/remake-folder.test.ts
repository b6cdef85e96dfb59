import { mkdtemp, rm, stat, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { remakeFolder, remakeFolderSync } from "./remake-folder.js";

let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), "clawdis-remake-folder-"));
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe("remakeFolder", () => {
  it("makes the folder and its parents (0700), and leaves one that exists as it is", async () => {
    const folder = join(dir, "a", "sessions");
    await remakeFolder(folder);
    remakeFolderSync(join(dir, "b", "sessions"));
    for (const made of [folder, join(dir, "b", "sessions")]) {
      expect((await stat(made)).isDirectory()).toBe(true);
      expect((await stat(made)).mode & 0o777).toBe(0o700);
    }
    await writeFile(join(folder, "kept"), "x");
    await remakeFolder(folder);
    expect((await stat(join(folder, "kept"))).isFile()).toBe(true);
  });

  it("throws what is not the folder vanishing: a file where a parent folder should be", async () => {
    await writeFile(join(dir, "file"), "x");
    await expect(remakeFolder(join(dir, "file", "sessions"))).rejects.toMatchObject({ code: "ENOTDIR" });
    expect(() => remakeFolderSync(join(dir, "file", "sessions"))).toThrow(/ENOTDIR/);
  });
});
