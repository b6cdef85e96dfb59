import { mkdir, mkdtemp, realpath, rm, symlink, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { ToolFileAccess } from "../../plugin-api/types.js";
import { isInside, pathVerdict, resolveToolPath } from "./tool-path.js";

describe("isInside", () => {
  it.each([
    ["/ws", "/ws", true],
    ["/ws", "/ws/a/b", true],
    ["/ws", "/ws/..x", true],
    ["/ws", "/wsx", false],
    ["/ws", "/", false],
    ["/ws/a", "/ws", false],
  ])("%s holds %s: %s", (root, path, inside) => {
    expect(isInside(root, path)).toBe(inside);
  });
});

describe("pathVerdict", () => {
  const secrets = [
    { path: "/state/clawdis.json", what: "the gateway's config file" },
    { path: "/state/journal", what: "in the journal" },
  ];
  const confined: ToolFileAccess = { confinedTo: "/state/workspace/group_1", secrets };
  const owner: ToolFileAccess = { secrets };
  it.each<[string, ToolFileAccess, string, RegExp | undefined]>([
    ["a file of the workspace, confined", confined, "/state/workspace/group_1/a.txt", undefined],
    ["the workspace itself, confined", confined, "/state/workspace/group_1", undefined],
    [
      "the primary workspace from a group",
      confined,
      "/state/workspace/notes.txt",
      /outside this session's workspace/,
    ],
    ["the config file, confined", confined, "/state/clawdis.json", /the gateway's config file/],
    ["anything else, owner", owner, "/etc/hostname", undefined],
    ["the config file, owner", owner, "/state/clawdis.json", /refused: x is the gateway's config file/],
    ["inside the journal, owner", owner, "/state/journal/inbound.jsonl", /in the journal/],
    ["a name that only starts like a secret, owner", owner, "/state/clawdis.json.bak", undefined],
  ])("%s", (_what, access, real, expected) => {
    const verdict = pathVerdict(real, "x", access);
    if (expected === undefined) expect(verdict).toBeUndefined();
    else expect(verdict).toMatch(expected);
  });
});

describe("resolveToolPath against real files", () => {
  let state: string;
  let ws: string;
  let access: ToolFileAccess;
  beforeEach(async () => {
    state = await realpath(await mkdtemp(join(tmpdir(), "clawdis-toolpath-")));
    ws = join(state, "workspace", "group_1");
    await mkdir(ws, { recursive: true });
    await writeFile(join(state, "clawdis.json"), "{ telegram: { botToken: 'secret' } }");
    await writeFile(join(state, "gateway.token"), "tok");
    await writeFile(join(state, "workspace", "primary.txt"), "primary");
    await writeFile(join(ws, "mine.txt"), "mine");
    access = {
      confinedTo: ws,
      secrets: [
        { path: join(state, "clawdis.json"), what: "the gateway's config file" },
        { path: join(state, "gateway.token"), what: "the gateway token" },
      ],
    };
  });
  afterEach(async () => {
    await rm(state, { recursive: true, force: true });
  });
  const resolveIn = (path: string, files: ToolFileAccess | null = access) =>
    resolveToolPath({ cwd: ws, ...(files ? { files } : {}) }, path, "read_file");

  it("takes a relative path inside the workspace, existing or to be created, as its real path", async () => {
    expect(await resolveIn("mine.txt")).toEqual({ ok: true, path: join(ws, "mine.txt") });
    expect(await resolveIn("new/dir/file.txt")).toEqual({ ok: true, path: join(ws, "new/dir/file.txt") });
    expect(await resolveIn(join(ws, "sub/../mine.txt"))).toEqual({ ok: true, path: join(ws, "mine.txt") });
  });

  it("refuses .., absolute paths and symlinks that lead out of the workspace", async () => {
    await symlink(join(state, "workspace"), join(ws, "up"));
    await symlink("/etc/hostname", join(ws, "host"));
    for (const path of [
      "../primary.txt",
      "../../clawdis.json",
      join(state, "workspace", "primary.txt"),
      "up/primary.txt",
      "host",
      "up/new.txt",
      "~/x",
    ]) {
      const resolved = await resolveIn(path);
      expect(resolved, path).toMatchObject({ ok: false });
      if (!resolved.ok) expect(resolved.error, path).toMatch(/^read_file: refused: /);
    }
  });

  it("refuses a dangling symlink (a write through it would land wherever it points)", async () => {
    await symlink(join(state, "elsewhere", "planted.txt"), join(ws, "dangling"));
    expect(await resolveIn("dangling", null)).toEqual({
      ok: false,
      error: "read_file: refused: dangling is a symlink to a missing file",
    });
  });

  it("refuses the state dir's secrets to the owner too, by any path or symlink, and allows the rest", async () => {
    const owner: ToolFileAccess = { secrets: access.secrets };
    await symlink(join(state, "gateway.token"), join(ws, "token-link"));
    for (const path of ["../../clawdis.json", join(state, "gateway.token"), "token-link"]) {
      expect(await resolveIn(path, owner), path).toMatchObject({
        ok: false,
        error: expect.stringMatching(/refused: .* is the gateway/),
      });
    }
    expect(await resolveIn("../primary.txt", owner)).toEqual({
      ok: true,
      path: join(state, "workspace", "primary.txt"),
    });
  });

  it("without files (a tool called outside the gateway) resolves anywhere", async () => {
    expect(await resolveIn("../../clawdis.json", null)).toEqual({
      ok: true,
      path: join(state, "clawdis.json"),
    });
  });
});
