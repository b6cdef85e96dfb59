import { mkdtemp, readdir, readFile, rm, stat } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { writePrivateFile } from "./index.js";

describe("writePrivateFile (plugin API)", () => {
  let dir: string;
  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), "clawdis-private-"));
  });
  afterEach(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it("writes 0600 in a 0700 folder it creates, and replaces the file whole", async () => {
    const path = join(dir, "credentials", "x", "creds.json");
    await writePrivateFile(path, '{"a":1}');
    await writePrivateFile(path, '{"a":2}');
    expect(await readFile(path, "utf8")).toBe('{"a":2}');
    expect((await stat(path)).mode & 0o777).toBe(0o600);
    expect((await stat(join(dir, "credentials", "x"))).mode & 0o777).toBe(0o700);
    expect(await readdir(join(dir, "credentials", "x"))).toEqual(["creds.json"]);
  });

  it("of many overlapping writes, the file holds exactly one of them, never a mix", async () => {
    const path = join(dir, "state.json");
    const bodies = Array.from({ length: 20 }, (_, i) =>
      JSON.stringify({ n: i, pad: "x".repeat(20_000 + i) }),
    );
    await Promise.all(bodies.map((b) => writePrivateFile(path, b)));
    expect(bodies).toContain(await readFile(path, "utf8"));
    expect((await readdir(dir)).filter((n) => n !== "state.json")).toEqual([]);
  });
});
