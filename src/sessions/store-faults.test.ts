import { readFileSync, renameSync, writeFileSync } from "node:fs";
import { mkdir, mkdtemp, open, readdir, readFile, rename, rm, stat, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { ManualClock } from "../core/clock.js";
import { createMemoryLogger } from "../core/logger.js";
import { chooseSession } from "../runtime/choose-session.js";
import { SessionStore, type SessionStoreOptions } from "./store.js";
import { readStoreFile, statStoreFile } from "./store-read.js";

let dir: string;
let sessions: string;
let path: string;
let clock: ManualClock;

beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), "clawdis-store-faults-"));
  sessions = join(dir, "sessions");
  path = join(sessions, "sessions.json");
  clock = new ManualClock(Date.UTC(2026, 0, 1));
});

afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

function makeStore(options: Partial<SessionStoreOptions> = {}) {
  const { logger, lines } = createMemoryLogger();
  return { store: new SessionStore({ path, logger, clock, ...options }), lines, logger };
}

const entry = (sessionId: string, extra: Record<string, unknown> = {}) => ({
  sessionId,
  updatedAt: 1000,
  ...extra,
});

const onDisk = async () =>
  JSON.parse(await readFile(path, "utf8")) as Record<string, Record<string, unknown>>;
const badFiles = async () =>
  (await readdir(sessions)).filter((name) => name.startsWith("sessions.json.bad-"));

/** Replaces the store the way an editor that saves by rename does (never a moment without a file). */
async function saveByRename(text: string): Promise<void> {
  await writeFile(`${path}.editor-tmp`, text);
  await rename(`${path}.editor-tmp`, path);
}

describe("a batch that cannot be committed", () => {
  it("fails only its own updates, and the next update runs again", async () => {
    // The store's directory is a file: taking the lock fails at once (ENOTDIR), as a full or broken disk would.
    await writeFile(sessions, "not a directory");
    const { store, lines } = makeStore();
    const first = store.update("A", () => entry("a"));
    const joined = store.update("B", () => entry("b"));
    await expect(first).rejects.toMatchObject({ code: "IO" });
    await expect(joined).rejects.toMatchObject({ code: "IO" });
    expect(lines.some((l) => l.level === "error" && l.message === "session store update failed")).toBe(true);
    await rm(sessions);
    expect(await store.update("C", () => entry("c"))).toMatchObject({ sessionId: "c" });
    expect(Object.keys(await onDisk())).toEqual(["C"]);
  });
});

describe("a bad hand edit while sessions run", () => {
  it("never leaves readers without a store and never starts a new session", async () => {
    const writer = makeStore();
    for (const key of ["main", "group:1", "group:2"]) {
      await writer.store.update(key, () =>
        entry(`${key.replace(":", "-")}-id`, { lastInteractionAt: clock.now() }),
      );
      await writeFile(join(sessions, `${key.replace(":", "-")}-id.jsonl`), "{}\n");
    }
    const good = await readFile(path, "utf8");
    const reader = makeStore();
    await reader.store.load();
    let done = false;
    let missing = 0;
    let newIds = 0;
    const readers = [
      (async () => {
        while (!done) if ((await statStoreFile(path)) === undefined) missing++;
      })(),
      ...["main", "group:1", "group:2"].map(async (key) => {
        while (!done) {
          const { sessionId } = await chooseSession(
            { store: reader.store, logger: reader.logger, idleMinutes: 60 },
            key,
            false,
            clock.now(),
          );
          if (sessionId !== `${key.replace(":", "-")}-id`) newIds++;
          // A read of an unchanged store is synchronous work: yield, so the saves below get their turn.
          await new Promise((resolve) => setImmediate(resolve));
        }
      }),
    ];
    for (let fault = 0; fault < 20; fault++) {
      // One comma too few, saved by rename: the gateway sets it aside and puts the last good copy back.
      await saveByRename(good.replace('",\n', '"\n'));
      clock.advance(1);
      await writer.store.load();
    }
    done = true;
    await Promise.all(readers);
    expect({ missing, newIds }).toEqual({ missing: 0, newIds: 0 });
    expect(await badFiles()).toHaveLength(20);
    expect(Object.keys(await onDisk())).toEqual(["main", "group:1", "group:2"]);
  });

  it("after the file was deleted, a bad file gets the last good copy, never an empty store", async () => {
    const { store, lines } = makeStore();
    await store.update("A", () => entry("a"));
    await store.update("B", () => entry("b"));
    await rm(path);
    expect(await store.load()).toEqual({});
    await writeFile(path, "{ garbled");
    expect(Object.keys(await store.load())).toEqual(["A", "B"]);
    expect(Object.keys(await onDisk())).toEqual(["A", "B"]);
    expect(lines.some((l) => l.message.includes("last good copy (2 sessions)"))).toBe(true);
  });

  it("keeps the bad file byte for byte (0600) and changes no session id", async () => {
    const previous = process.umask(0o022);
    try {
      const { store, logger } = makeStore();
      await store.update("main", () => entry("m-1", { lastInteractionAt: clock.now() }));
      await writeFile(join(sessions, "m-1.jsonl"), "{}\n");
      // An editor's save: a new file, 0644 under this umask.
      await saveByRename('{"main": {"sessionId": "m-1",');
      expect((await stat(path)).mode & 0o777).toBe(0o644);
      const chosen = await chooseSession({ store, logger, idleMinutes: 60 }, "main", false, clock.now());
      expect(chosen.sessionId).toBe("m-1");
      const [bad] = await badFiles();
      expect(await readFile(join(sessions, bad as string), "utf8")).toBe('{"main": {"sessionId": "m-1",');
      expect((await stat(join(sessions, bad as string))).mode & 0o777).toBe(0o600);
      expect((await stat(path)).mode & 0o777).toBe(0o600);
      expect((await onDisk()).main?.sessionId).toBe("m-1");
    } finally {
      process.umask(previous);
    }
  });
});

describe("a hand edit saved between the update's read and its rename", () => {
  /** An update whose `fn` (which runs after the read, before the write) saves a hand edit the first time. */
  async function updateWhileEditing(store: SessionStore, edit: () => void) {
    let calls = 0;
    const stored = await store.update("A", (current) => {
      if (calls++ === 0) edit();
      return current && { ...current, model: "x" };
    });
    return { stored, calls };
  }

  const editB = (text: string) => {
    const parsed = JSON.parse(text) as Record<string, Record<string, unknown>>;
    (parsed.B as Record<string, unknown>).note = "edited by hand";
    return JSON.stringify(parsed, null, 2);
  };

  it("is kept when saved by rename: the update starts again from it", async () => {
    const { store } = makeStore();
    await store.update("A", () => entry("a"));
    await store.update("B", () => entry("b"));
    const { stored, calls } = await updateWhileEditing(store, () => {
      writeFileSync(`${path}.editor`, editB(readFileSync(path, "utf8")));
      renameSync(`${path}.editor`, path);
    });
    expect(calls).toBe(2);
    expect(stored).toMatchObject({ sessionId: "a", model: "x" });
    expect(await onDisk()).toMatchObject({ A: { model: "x" }, B: { note: "edited by hand" } });
  });

  it("is kept when saved in place", async () => {
    const { store } = makeStore();
    await store.update("A", () => entry("a"));
    await store.update("B", () => entry("b"));
    await updateWhileEditing(store, () => writeFileSync(path, editB(readFileSync(path, "utf8"))));
    expect(await onDisk()).toMatchObject({ A: { model: "x" }, B: { note: "edited by hand" } });
  });

  it("an edit at every attempt: the update fails after a few, and the last edit stays", async () => {
    const { store } = makeStore();
    await store.update("A", () => entry("a"));
    await store.update("B", () => entry("b"));
    let n = 0;
    const update = store.update("A", (current) => {
      n++;
      const parsed = JSON.parse(readFileSync(path, "utf8")) as Record<string, Record<string, unknown>>;
      (parsed.B as Record<string, unknown>).edit = n;
      writeFileSync(`${path}.editor`, JSON.stringify(parsed, null, 2));
      renameSync(`${path}.editor`, path);
      return current && { ...current, model: "x" };
    });
    await expect(update).rejects.toMatchObject({ code: "STORE_LOCKED" });
    expect(n).toBe(5);
    const after = await onDisk();
    expect(after.B?.edit).toBe(5);
    expect(after.A?.model).toBeUndefined();
    expect((await readdir(sessions)).filter((name) => name.includes(".tmp-"))).toEqual([]);
  });
});

describe("a store over the size limit", () => {
  /** A sparse file of `size` bytes (no disk blocks): what a runaway writer or a bad paste leaves. */
  async function sparseStore(size: number): Promise<void> {
    const handle = await open(`${path}.big`, "w");
    await handle.truncate(size);
    await handle.close();
    await rename(`${path}.big`, path);
  }

  it("of 2.1 GB is set aside unread, the last good copy takes its place, and it is not read again", async () => {
    const { store, lines } = makeStore();
    await store.update("main", () => entry("m"));
    await sparseStore(2_100_000_000);
    const parsesBefore = store.parseCount;
    expect(Object.keys(await store.load())).toEqual(["main"]);
    expect(await store.get("main")).toMatchObject({ sessionId: "m" });
    expect(store.parseCount).toBe(parsesBefore);
    const [bad] = await badFiles();
    expect((await stat(join(sessions, bad as string))).size).toBe(2_100_000_000);
    expect((await stat(path)).size).toBeLessThan(1000);
    const warning = lines.find((l) => l.level === "warn")?.message ?? "";
    expect(warning).toContain("over the size limit of 256 MB");
    expect(warning).toContain(bad);
    await store.update("main", (current) => current && { ...current, model: "x" });
    expect(await badFiles()).toHaveLength(1);
    expect(store.parseCount).toBe(parsesBefore);
  });

  it("is reported by the command line's reader without reading it", async () => {
    await mkdir(sessions, { recursive: true });
    await sparseStore(2_100_000_000);
    const read = await readStoreFile(path);
    expect(read.exists && !read.parsed.ok && read.parsed.reason).toMatch(/over the size limit of 256 MB/);
  });

  it("with no good copy known: even valid JSON over the limit is set aside and rebuilt from the transcripts", async () => {
    await mkdir(sessions, { recursive: true });
    const header = {
      type: "session",
      version: 1,
      id: "t-1",
      sessionKey: "main",
      createdAt: "2026-01-01T00:00:00Z",
    };
    await writeFile(join(sessions, "t-1.jsonl"), `${JSON.stringify(header)}\n`);
    const big = { main: entry("t-1", { padding: "x".repeat(2000) }) };
    await writeFile(path, JSON.stringify(big));
    const { store } = makeStore({ maxBytes: 1024 });
    expect(await store.get("main")).toMatchObject({ sessionId: "t-1" });
    expect(store.parseCount).toBe(0);
    expect(await badFiles()).toHaveLength(1);
    expect((await onDisk()).main).not.toHaveProperty("padding");
  });
});

describe("keys that name members of Object.prototype", () => {
  const names = ["constructor", "toString", "__proto__", "hasOwnProperty", "valueOf"];

  it.each(names)("get(%j) is undefined on a missing store and on a store without it", async (key) => {
    const { store } = makeStore();
    expect(await store.get(key)).toBeUndefined();
    await store.update("main", () => entry("m"));
    expect(await store.get(key)).toBeUndefined();
    const map = await store.load();
    expect(Object.getPrototypeOf(map)).toBeNull();
  });

  it.each(names)("%j is an ordinary key: update gets undefined first, then its own entry", async (key) => {
    const { store } = makeStore();
    await store.update("main", () => entry("m"));
    const seen: unknown[] = [];
    await store.update(key, (current) => {
      seen.push(current);
      return entry("p-1");
    });
    await store.update(key, (current) => {
      seen.push(current?.sessionId);
      return current;
    });
    expect(seen).toEqual([undefined, "p-1"]);
    expect(await store.get(key)).toMatchObject({ sessionId: "p-1" });
    const written = await readFile(path, "utf8");
    expect(Object.keys(JSON.parse(written))).toEqual(["main", key]);
    // Read back by another instance from the file alone.
    expect(await makeStore().store.get(key)).toMatchObject({ sessionId: "p-1" });
  });
});

describe("an entry whose sessionId is not a safe file name", () => {
  const unsafe: unknown[] = [
    "../../etc/passwd",
    "a/b",
    "a\\b",
    "",
    "x".repeat(129),
    "nul\0",
    "sp ace",
    7,
    null,
  ];

  it.each(unsafe.map((id) => [JSON.stringify(id), id]))(
    "%s is never handed out, by load, get or update",
    async (_, id) => {
      await mkdir(sessions, { recursive: true });
      await writeFile(
        path,
        JSON.stringify({ ok: entry("ok"), evil: { sessionId: id, updatedAt: 1, mine: 1 } }),
      );
      const { store } = makeStore();
      expect(Object.keys(await store.load())).toEqual(["ok"]);
      expect(await store.get("evil")).toBeUndefined();
      const given: unknown[] = [];
      await store.update("evil", (current, unusable) => {
        given.push(current, unusable);
        return undefined;
      });
      expect(given).toEqual([undefined, { sessionId: id, updatedAt: 1, mine: 1 }]);
      // Left in the file as it is (deleting it would need a usable entry).
      expect((await onDisk()).evil).toEqual({ sessionId: id, updatedAt: 1, mine: 1 });
    },
  );
});

describe("file modes with a umask of 022", () => {
  it("the store directory is 0700 and sessions.json 0600", async () => {
    const previous = process.umask(0o022);
    try {
      const { store } = makeStore();
      await store.update("main", () => entry("m"));
      expect((await stat(sessions)).mode & 0o777).toBe(0o700);
      expect((await stat(path)).mode & 0o777).toBe(0o600);
    } finally {
      process.umask(previous);
    }
  });
});
