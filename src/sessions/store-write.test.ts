import { mkdir, mkdtemp, readdir, readFile, rm, stat, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { fillDisk, mountTmpfs, unmount } from "../../test/fault/tmpfs.js";
import { WRITE_CALL_BYTES, writeCalls, writeFileAtomic, writePiecesAtomic } from "./store-write.js";

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

/** Bytes 0, 1, 2, … (mod 251, so that a piece written at the wrong place shows) in pieces of the given sizes. */
function numbered(sizes: number[]): Buffer[] {
  let n = 0;
  return sizes.map((size) => {
    const piece = Buffer.allocUnsafe(size);
    for (let i = 0; i < size; i++) piece[i] = n++ % 251;
    return piece;
  });
}

describe("writeCalls", () => {
  it("cuts the pieces into calls of at most the limit, in order, at the right positions, without copies", () => {
    const pieces = numbered([10, 0, 25, 7, 1, 40]);
    const calls = writeCalls(pieces, 16);
    expect(calls.map((c) => c.position)).toEqual([0, 16, 32, 48, 64, 80]);
    for (const call of calls) {
      expect(call.buffers.reduce((n, b) => n + b.length, 0)).toBeLessThanOrEqual(16);
      // Views of the pieces' memory, not copies.
      for (const b of call.buffers) expect(pieces.some((p) => p.buffer === b.buffer)).toBe(true);
    }
    const written = Buffer.concat(calls.flatMap((c) => c.buffers));
    expect(written.equals(Buffer.concat(pieces))).toBe(true);
    expect(writeCalls([], 16)).toEqual([]);
    expect(() => writeCalls(pieces, 0)).toThrow(RangeError);
    expect(writeCalls([Buffer.alloc(0)], 16)).toEqual([]);
  });

  it("never hands the kernel more than WRITE_CALL_BYTES in one call (a 46 MB store's way)", () => {
    const big = [
      Buffer.alloc(3 * WRITE_CALL_BYTES + 5),
      Buffer.alloc(476),
      Buffer.alloc(2 * WRITE_CALL_BYTES),
    ];
    const calls = writeCalls(big);
    expect(calls).toHaveLength(6);
    for (const call of calls) {
      expect(call.buffers.reduce((n, b) => n + b.length, 0)).toBeLessThanOrEqual(WRITE_CALL_BYTES);
    }
    expect(WRITE_CALL_BYTES).toBeLessThanOrEqual(1024 * 1024);
  });
});

describe("writePiecesAtomic, files of several write calls", () => {
  it("writes every byte in its place, the calls running at once", async () => {
    const path = join(dir, "sessions.json");
    await writeFile(path, "old");
    const pieces = numbered([WRITE_CALL_BYTES - 3, 7, 5 * WRITE_CALL_BYTES + 11, 1, 100]);
    await writePiecesAtomic(path, pieces);
    expect((await readFile(path)).equals(Buffer.concat(pieces))).toBe(true);
    expect(await readdir(dir)).toEqual(["sessions.json"]);
  });

  it("on a full disk part way through fails with ENOSPC, and leaves the file as it was and no temp file", async () => {
    const mount = join(dir, "full");
    await mkdir(mount);
    await mountTmpfs(mount, 3 * WRITE_CALL_BYTES);
    try {
      const path = join(mount, "sessions.json");
      await writeFile(path, "old");
      const write = writePiecesAtomic(path, numbered([8 * WRITE_CALL_BYTES]));
      await expect(write).rejects.toMatchObject({ code: "ENOSPC" });
      expect(await readFile(path, "utf8")).toBe("old");
      expect(await readdir(mount)).toEqual(["sessions.json"]);
    } finally {
      await unmount(mount);
    }
  });
});
