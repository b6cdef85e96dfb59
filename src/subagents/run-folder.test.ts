import { mkdir, mkdtemp, readdir, readFile, rm, stat, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { createRunFolder, type RunRecord, readAllRecords, runFolder, writeRecord } from "./run-folder.js";
import { STARTED } from "./run-state.js";

describe("run folders", () => {
  let store: string;
  beforeEach(async () => {
    store = await mkdtemp(join(tmpdir(), "clawdis-subagents-"));
  });
  afterEach(async () => {
    await rm(store, { recursive: true, force: true });
  });

  const record = (id: string): RunRecord => ({
    version: 1,
    id,
    sessionKey: "main",
    sessionId: "s1",
    requester: { channel: "chat", senderId: "alice", authority: "owner" },
    route: { channel: "chat", chatId: "c", chatType: "direct" },
    tools: ["read_file"],
    noticeTools: ["read_file", "spawn_agent"],
    brief: "look things up",
    startedAt: "2026-12-06T00:00:00.000Z",
    state: STARTED,
  });

  it("task.md names the brief, the requester and the tools; run.json is private and replaced whole", async () => {
    const folder = runFolder(join(store, "s1"), "run-1");
    await createRunFolder(folder, record("run-1"));
    const task = await readFile(join(folder, "task.md"), "utf8");
    expect(task).toContain("Requested by owner chat:alice in session main");
    expect(task).toContain("Tools: read_file.");
    expect(task).toContain("look things up");
    expect((await stat(join(folder, "run.json"))).mode & 0o777).toBe(0o600);
    expect((await stat(join(folder, "logs"))).isDirectory()).toBe(true);
    await writeRecord(folder, { ...record("run-1"), state: { status: "done", reported: false } });
    expect(JSON.parse(await readFile(join(folder, "run.json"), "utf8")).state.status).toBe("done");
    expect((await readdir(folder)).filter((n) => n.endsWith(".tmp"))).toEqual([]);
  });

  it("finds every run of every session; one that does not read is told and skipped", async () => {
    await createRunFolder(runFolder(join(store, "s1"), "run-1"), record("run-1"));
    await createRunFolder(runFolder(join(store, "s2"), "run-2"), { ...record("run-2"), sessionId: "s2" });
    const broken = runFolder(join(store, "s2"), "run-3");
    await mkdir(broken, { recursive: true });
    await writeFile(join(broken, "run.json"), "{ not json");
    await mkdir(runFolder(join(store, "s3"), "run-4"), { recursive: true }); // no run.json yet: not a run
    const bad: string[] = [];
    const found = await readAllRecords(store, (path) => bad.push(path));
    expect(found.map((f) => f.record.id).sort()).toEqual(["run-1", "run-2"]);
    expect(bad).toEqual([join(broken, "run.json")]);
  });
});
