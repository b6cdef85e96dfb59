import { spawn } from "node:child_process";
import { mkdir, mkdtemp, readdir, readFile, rm, symlink, utimes, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { createMemoryLogger } from "../core/logger.js";
import { processRuns } from "../core/process-runs.js";
import { ABANDONED_AFTER_MS, removeAbandonedTempFiles, tempFileWriter } from "./abandoned-temp-files.js";
import { writePiecesAtomic } from "./store-write.js";

let dir: string;

beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), "clawdis-temp-sweep-"));
});

afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

/** The pid of a process that ran and exited. */
async function deadPid(): Promise<number> {
  const child = spawn(process.execPath, ["-e", ""], { stdio: "ignore" });
  await new Promise((resolve) => child.once("exit", resolve));
  return child.pid as number;
}

/**
 * The name store-write.ts gives its temp file for `path`, as it really writes it (seen from inside a write that
 * is then abandoned), with the pid of `writer` in place of ours.
 */
async function storeTempName(path: string, writer: number): Promise<string> {
  let seen: string[] = [];
  await writePiecesAtomic(path, [Buffer.from("x")], {
    beforeRename: async () => {
      seen = (await readdir(dir)).filter((name) => name.includes(".tmp-"));
      throw new Error("abandoned");
    },
  }).catch(() => {});
  expect(seen).toHaveLength(1);
  return (seen[0] as string).replace(`-${process.pid}-`, `-${writer}-`);
}

describe("removeAbandonedTempFiles", () => {
  it("removes the temp files of writers that no longer run, and nothing else", async () => {
    const store = join(dir, "sessions.json");
    await writeFile(store, '{"main":{}}\n');
    const dead = await deadPid();
    expect(processRuns(dead)).toBe(false);
    const deadStore = await storeTempName(store, dead);
    const deadJournal = `inbound.jsonl.tmp-${dead}`;
    const ours = await storeTempName(store, process.pid);
    const live = await storeTempName(store, process.ppid);
    // A person's own files in the same folder, even with a temp file's shape, are not the store's or journal's.
    const others = [
      "notes.tmp-x",
      `sessions.json.tmp-${dead}.bak`,
      `report.txt.tmp-${dead}`,
      `.draft.md.tmp-${dead}-0a1b2c3d`,
    ];
    const names = [deadStore, deadJournal, ours, live, ...others];
    for (const name of names) await writeFile(join(dir, name), "half a write");
    // A directory and a link with a temp file's name are never touched.
    const folder = `.sessions.json.tmp-${dead}-00000000`;
    const link = `inbound.jsonl.tmp-${dead}0`;
    await mkdir(join(dir, folder));
    await symlink(store, join(dir, link));
    const { logger, lines } = createMemoryLogger();

    const journal = join(dir, "inbound.jsonl");
    const removed = await removeAbandonedTempFiles([store, journal, store], { logger, now: Date.now() });

    expect(removed.sort()).toEqual([join(dir, deadJournal), join(dir, deadStore)].sort());
    expect((await readdir(dir)).sort()).toEqual(
      ["sessions.json", ours, live, ...others, folder, link].sort(),
    );
    expect(await readFile(store, "utf8")).toBe('{"main":{}}\n');
    const warned = lines.filter((l) => l.level === "warn");
    expect(warned).toHaveLength(1);
    expect(warned[0]?.fields).toMatchObject({ count: 2 });
  });

  it("removes a live writer's temp file only once it is older than an hour (a reused pid)", async () => {
    const store = join(dir, "sessions.json");
    const young = await storeTempName(store, 4_000_001);
    const old = `state.lock.tmp-4000002`;
    // This process's own, however old: a write of ours may be under way.
    const ours = `state.lock.tmp-${process.pid}`;
    for (const name of [young, old, ours]) await writeFile(join(dir, name), "x");
    const now = Date.now();
    const hourAgo = (now - ABANDONED_AFTER_MS - 1000) / 1000;
    for (const name of [old, ours]) await utimes(join(dir, name), hourAgo, hourAgo);
    const { logger } = createMemoryLogger();

    const files = [store, join(dir, "state.lock")];
    const removed = await removeAbandonedTempFiles(files, { logger, now, runs: () => true });

    expect(removed).toEqual([join(dir, old)]);
    expect((await readdir(dir)).sort()).toEqual([young, ours].sort());
    // The same young file once its writer is gone.
    expect(await removeAbandonedTempFiles(files, { logger, now, runs: () => false })).toEqual([
      join(dir, young),
    ]);
  });

  it("skips a folder that does not exist, silently, and logs one it cannot read", async () => {
    const { logger, lines } = createMemoryLogger();
    const file = join(dir, "not-a-folder");
    await writeFile(file, "x");
    const files = [join(dir, "gone", "sessions.json"), join(file, "sessions.json")];
    expect(await removeAbandonedTempFiles(files, { logger, now: Date.now() })).toEqual([]);
    expect(lines.map((l) => `${l.level} ${l.message} ${String(l.fields?.dir)}`)).toEqual([
      `warn could not look for abandoned temp files ${file}`,
    ]);
  });
});

describe("tempFileWriter", () => {
  it("reads the writer from the names of a file's atomic writes, and nothing from other names", () => {
    const store = "/state/sessions/sessions.json";
    expect(tempFileWriter(store, ".sessions.json.tmp-123-0a1b2c3d")).toBe(123);
    expect(tempFileWriter(store, "sessions.json.tmp-77")).toBe(77);
    expect(tempFileWriter("/state/journal/inbound.jsonl", "inbound.jsonl.tmp-77")).toBe(77);
    expect(tempFileWriter(store, "sessions.json")).toBeUndefined();
    expect(tempFileWriter(store, ".sessions.json.tmp-123-xyz")).toBeUndefined();
    expect(tempFileWriter(store, "sessions.json.tmp-")).toBeUndefined();
    expect(tempFileWriter(store, "sessionsXjson.tmp-5")).toBeUndefined();
    expect(tempFileWriter(store, "inbound.jsonl.tmp-77")).toBeUndefined();
  });
});
