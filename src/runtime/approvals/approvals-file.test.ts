import { mkdtemp, readdir, readFile, rm, stat, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { createMemoryLogger } from "../../core/logger.js";
import { ApprovalsFile, parseApprovals } from "./approvals-file.js";

let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), "clawdis-approvals-"));
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe("parseApprovals", () => {
  it.each([
    ['{"bash":["ls","git status*"]}', ["ls", "git status*"]],
    ["{}", []],
    ['{"bash":[]}', []],
    ['{"bash":"ls"}', undefined],
    ['{"bash":[1]}', undefined],
    ["[]", undefined],
    ["null", undefined],
    ["{not json", undefined],
  ])("%s", (text, expected) => {
    expect(parseApprovals(text)).toEqual(expected);
  });
});

describe("ApprovalsFile", () => {
  it("a missing file allows nothing; an added entry is written 0600 and read back by a new reader", async () => {
    const path = join(dir, "approvals.json");
    const file = new ApprovalsFile(path, createMemoryLogger().logger, () => 1);
    expect(file.bash()).toEqual([]);
    await file.add("git status");
    await file.add("git status");
    expect(file.bash()).toEqual(["git status"]);
    expect((await stat(path)).mode & 0o777).toBe(0o600);
    expect(new ApprovalsFile(path, createMemoryLogger().logger, () => 1).bash()).toEqual(["git status"]);
  });

  it("a hand edit is read at the next use", async () => {
    const path = join(dir, "approvals.json");
    const file = new ApprovalsFile(path, createMemoryLogger().logger, () => 1);
    await file.add("ls");
    await writeFile(path, JSON.stringify({ bash: ["ls", "npm test*", "make"] }));
    expect(file.bash()).toEqual(["ls", "npm test*", "make"]);
  });

  it("a corrupt file is set aside, never overwritten, with an error in the log; a later add writes a new one", async () => {
    const path = join(dir, "approvals.json");
    await writeFile(path, '{"bash": ["ls", ');
    const { logger, lines } = createMemoryLogger();
    const file = new ApprovalsFile(path, logger, () => 42);
    expect(file.bash()).toEqual([]);
    expect(await readFile(`${path}.corrupt-42`, "utf8")).toBe('{"bash": ["ls", ');
    expect((await readdir(dir)).sort()).toEqual(["approvals.json.corrupt-42"]);
    const error = lines.find((l) => l.level === "error");
    expect(error?.message).toMatch(/does not parse.*set aside/);
    expect(error?.fields?.setAsideAs).toBe(`${path}.corrupt-42`);
    await file.add("make");
    expect(JSON.parse(await readFile(path, "utf8"))).toEqual({ bash: ["make"] });
    expect(await readFile(`${path}.corrupt-42`, "utf8")).toBe('{"bash": ["ls", ');
  });
});
