import { mkdtemp, readFile, rm, stat, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { readOrCreateToken, readToken } from "./gateway-token.js";

describe("gateway token", () => {
  let dir: string;
  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), "clawdis-token-"));
  });
  afterEach(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it("is created once with mode 0600 and read back unchanged", async () => {
    const path = join(dir, "state", "gateway.token");
    expect(await readToken(path)).toBeUndefined();
    const token = await readOrCreateToken(path);
    expect(token).toMatch(/^[0-9a-f]{64}$/);
    expect((await stat(path)).mode & 0o777).toBe(0o600);
    expect(await readOrCreateToken(path)).toBe(token);
    expect(await readToken(path)).toBe(token);
    expect((await readFile(path, "utf8")).trim()).toBe(token);
  });

  it("keeps a token the user wrote, and replaces one too short to be safe", async () => {
    const path = join(dir, "gateway.token");
    await writeFile(path, "my-own-long-enough-token\n");
    expect(await readOrCreateToken(path)).toBe("my-own-long-enough-token");
    await writeFile(path, "short\n");
    expect(await readOrCreateToken(path)).not.toBe("short");
  });
});
