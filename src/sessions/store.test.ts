import { spawn } from "node:child_process";
import { mkdir, mkdtemp, readdir, readFile, rm, utimes, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { fillDisk, mountTmpfs, unmount } from "../../test/fault/tmpfs.js";
import { ManualClock } from "../core/clock.js";
import { isClawdisError } from "../core/errors.js";
import { createMemoryLogger } from "../core/logger.js";
import { SessionStore } from "./store.js";
import type { SessionEntry } from "./types.js";

let dir: string;
let path: string;
let clock: ManualClock;

beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), "clawdis-store-"));
  path = join(dir, "sessions", "sessions.json");
  clock = new ManualClock(Date.UTC(2026, 0, 1));
});

afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

function makeStore() {
  const { logger, lines } = createMemoryLogger();
  return { store: new SessionStore({ path, logger, clock }), lines };
}

const entry = (sessionId: string, extra: Record<string, unknown> = {}) => ({
  sessionId,
  updatedAt: 1000,
  ...extra,
});

async function badFiles(): Promise<string[]> {
  return (await readdir(join(dir, "sessions"))).filter((name) => name.startsWith("sessions.json.bad-"));
}

describe("SessionStore basics", () => {
  it("reads a missing file as an empty store and writes nothing", async () => {
    const { store } = makeStore();
    expect(await store.load()).toEqual({});
    expect(await store.get("main")).toBeUndefined();
    await expect(readFile(path)).rejects.toMatchObject({ code: "ENOENT" });
    expect(store.dir).toBe(join(dir, "sessions"));
  });

  it("creates the directory and file on the first update, pretty-printed with a trailing newline", async () => {
    const { store } = makeStore();
    const stored = await store.update("main", () => ({ sessionId: "s-1", updatedAt: Number.NaN }));
    expect(stored).toEqual({ sessionId: "s-1", updatedAt: clock.now() });
    const text = await readFile(path, "utf8");
    expect(text).toBe(`${JSON.stringify({ main: { sessionId: "s-1", updatedAt: clock.now() } }, null, 2)}\n`);
    expect(await store.get("main")).toEqual(stored);
  });

  it("an update resolves once its lock is released (whoever awaited it finds the store unlocked)", async () => {
    const { store } = makeStore();
    for (let i = 0; i < 5; i++) {
      await store.update("main", () => ({ sessionId: "s-1", updatedAt: Number.NaN }));
      expect(await readdir(join(dir, "sessions"))).not.toContain("sessions.json.lock");
    }
  });

  it("stamps updatedAt with the clock unless fn set a new number", async () => {
    const { store } = makeStore();
    await store.update("main", () => entry("s-1", { updatedAt: 5 }));
    expect((await store.get("main"))?.updatedAt).toBe(5);
    clock.advance(60_000);
    await store.update("main", (current) => current && { ...current, model: "m" });
    expect(await store.get("main")).toEqual({ sessionId: "s-1", updatedAt: clock.now(), model: "m" });
  });

  it("does not parse an unchanged file again, and does parse a changed one", async () => {
    await writeFile(join(await mkdirp(), "sessions.json"), JSON.stringify({ main: entry("s-1") }));
    const { store } = makeStore();
    const first = await store.load();
    const second = await store.load();
    expect(second).toBe(first);
    expect(store.parseCount).toBe(1);
    await writeFile(path, JSON.stringify({ main: entry("s-2", { model: "changed" }) }));
    const third = await store.load();
    expect(third).not.toBe(first);
    expect(third.main?.sessionId).toBe("s-2");
    expect(store.parseCount).toBe(2);
  });

  it("does not parse again what it wrote itself, but does parse a file changed since", async () => {
    const { store } = makeStore();
    await store.update("A", () => entry("a"));
    await store.update("B", () => entry("b"));
    const written = await store.load();
    expect(store.parseCount).toBe(0);
    expect(Object.keys(written)).toEqual(["A", "B"]);
    const text = await readFile(path, "utf8");
    await writeFile(path, text.replace('"b"', '"b2"'));
    await store.update("A", (current) => current && { ...current, model: "m" });
    expect(store.parseCount).toBe(1);
    expect((await store.get("B"))?.sessionId).toBe("b2");
  });

  it("hands out copies: changing what update returned or fn received does not change the store", async () => {
    const { store } = makeStore();
    const stored = await store.update("A", () => entry("a", { origin: { channel: "t", chatId: "1" } }));
    (stored?.origin as { chatId: string }).chatId = "changed";
    await expect(
      store.update("A", (current) => {
        (current?.origin as { chatId: string }).chatId = "changed in fn";
        throw new Error("fn gave up");
      }),
    ).rejects.toThrow("fn gave up");
    await store.update("B", () => entry("b"));
    expect(JSON.parse(await readFile(path, "utf8")).A.origin).toEqual({ channel: "t", chatId: "1" });
    expect((await store.get("A"))?.origin?.chatId).toBe("1");
  });

  it("keeps key order and unknown fields, and changes only the one key", async () => {
    const original = {
      zeta: entry("z", { custom: { nested: [1, 2] } }),
      main: entry("m", { thinkingLevel: "high" }),
      alpha: entry("a"),
    };
    await writeFile(join(await mkdirp(), "sessions.json"), JSON.stringify(original));
    const { store } = makeStore();
    await store.update("main", (current) => current && { ...current, verboseLevel: "on" });
    await store.update("beta", () => entry("b", { updatedAt: 2000 }));
    const written = JSON.parse(await readFile(path, "utf8"));
    expect(Object.keys(written)).toEqual(["zeta", "main", "alpha", "beta"]);
    expect(written.zeta).toEqual(original.zeta);
    expect(written.alpha).toEqual(original.alpha);
    expect(written.main).toEqual({ ...original.main, verboseLevel: "on", updatedAt: clock.now() });
    // No temp file and no lock directory left behind.
    expect(await readdir(join(dir, "sessions"))).toEqual(["sessions.json"]);
  });

  it("honours a hand edit of another key made after the last read", async () => {
    const { store } = makeStore();
    await store.update("A", () => entry("a-1"));
    await store.update("B", () => entry("b-1"));
    await store.load();
    const onDisk = JSON.parse(await readFile(path, "utf8"));
    onDisk.B.thinkingLevel = "high";
    onDisk.B.note = "edited by hand";
    await writeFile(path, JSON.stringify(onDisk, null, 2));
    await store.update("A", (current) => current && { ...current, model: "x" });
    const after = JSON.parse(await readFile(path, "utf8"));
    expect(after.B).toEqual({ ...onDisk.B });
    expect(after.A.model).toBe("x");
  });

  it("deletes the key when fn returns undefined, and writes nothing for an absent key", async () => {
    const { store } = makeStore();
    expect(await store.update("ghost", () => undefined)).toBeUndefined();
    await expect(readFile(path)).rejects.toMatchObject({ code: "ENOENT" });
    await store.update("A", () => entry("a"));
    await store.update("B", () => entry("b"));
    await store.update("A", () => undefined);
    expect(Object.keys(JSON.parse(await readFile(path, "utf8")))).toEqual(["B"]);
  });

  it("treats a deleted file as a reset", async () => {
    const { store } = makeStore();
    await store.update("A", () => entry("a"));
    await rm(path);
    expect(await store.load()).toEqual({});
    await store.update("B", () => entry("b"));
    expect(Object.keys(JSON.parse(await readFile(path, "utf8")))).toEqual(["B"]);
  });

  it("refuses an invalid session id and writes nothing", async () => {
    const { store } = makeStore();
    await store.update("A", () => entry("a"));
    const before = await readFile(path, "utf8");
    let thrown: unknown;
    try {
      await store.update("A", () => entry("../../etc/passwd"));
    } catch (error) {
      thrown = error;
    }
    expect(isClawdisError(thrown, "SESSION_ID_INVALID")).toBe(true);
    expect((thrown as Error).message).toContain('"../../etc/passwd"');
    expect(await readFile(path, "utf8")).toBe(before);
    // The store is still usable afterwards (the lock was released).
    await store.update("B", () => entry("b"));
    expect(Object.keys(await store.load())).toEqual(["A", "B"]);
  });

  it("skips unusable entries with a warning but never removes them from the file", async () => {
    const original = {
      noId: { updatedAt: 1, note: "keep me" },
      badId: { sessionId: "../x", updatedAt: 1 },
      oddTime: { sessionId: "t", updatedAt: "yesterday" },
      main: entry("m"),
    };
    await writeFile(join(await mkdirp(), "sessions.json"), JSON.stringify(original));
    const { store, lines } = makeStore();
    const map = await store.load();
    expect(Object.keys(map)).toEqual(["oddTime", "main"]);
    expect(map.oddTime?.updatedAt).toBe(0);
    const warnings = lines.filter((l) => l.level === "warn").map((l) => l.message);
    expect(warnings.some((m) => m.includes('"noId"'))).toBe(true);
    expect(warnings.some((m) => m.includes('"badId"') && m.includes("path separator"))).toBe(true);
    await store.load();
    expect(lines.filter((l) => l.level === "warn")).toHaveLength(warnings.length);
    await store.update("main", (current) => current && { ...current, model: "x" });
    const written = JSON.parse(await readFile(path, "utf8"));
    expect(written.noId).toEqual(original.noId);
    expect(written.badId).toEqual(original.badId);
    expect(written.oddTime).toEqual(original.oddTime);
  });

  it("group-commits concurrent updates in order; one that fails does not fail the others", async () => {
    const { store } = makeStore();
    const updates = Array.from({ length: 200 }, (_, i) =>
      store.update(`k${i % 100}`, (current) => ({
        sessionId: `s-${i}`,
        updatedAt: 1,
        seen: [...((current?.seen as number[] | undefined) ?? []), i],
      })),
    );
    const bad = store.update("bad", () => ({ sessionId: "../../x", updatedAt: 1 }));
    const results = await Promise.all(updates);
    await expect(bad).rejects.toMatchObject({ code: "SESSION_ID_INVALID" });
    expect(results[150]).toMatchObject({ sessionId: "s-150", seen: [50, 150] });
    const onDisk = JSON.parse(await readFile(path, "utf8")) as Record<
      string,
      { sessionId: string; seen: number[] }
    >;
    expect(Object.keys(onDisk)).toHaveLength(100);
    expect(onDisk.k7).toMatchObject({ sessionId: "s-107", seen: [7, 107] });
    expect(onDisk.bad).toBeUndefined();
  });

  it("a key deleted and stored again in one batch goes at the end, like a new key", async () => {
    const { store } = makeStore();
    for (const key of ["A", "B", "C"]) await store.update(key, () => entry(key.toLowerCase()));
    await Promise.all([
      store.update("A", () => undefined),
      store.update("X", () => entry("x")),
      store.update("Y", () => entry("y")),
      store.update("X", () => undefined),
      store.update("A", () => entry("a2")),
      store.update("X", () => entry("x2")),
      store.update("B", (current) => current && { ...current, model: "m" }),
    ]);
    const written = JSON.parse(await readFile(path, "utf8"));
    expect(Object.keys(written)).toEqual(["B", "C", "Y", "A", "X"]);
    expect(written.B.model).toBe("m");
    expect(Object.keys(await store.load())).toEqual(["B", "C", "Y", "A", "X"]);
  });

  it("gives transcript paths inside the store directory only", () => {
    const { store } = makeStore();
    expect(store.transcriptPath("abc")).toBe(join(dir, "sessions", "abc.jsonl"));
    expect(() => store.transcriptPath("../abc")).toThrow(/refused/);
  });

  async function mkdirp(): Promise<string> {
    const { mkdir } = await import("node:fs/promises");
    await mkdir(join(dir, "sessions"), { recursive: true });
    return join(dir, "sessions");
  }
});

describe("SessionStore reads", () => {
  it("callers that need the unread file at once share one read of it", async () => {
    const { store: writer } = makeStore();
    for (let i = 0; i < 20; i++) await writer.update(`k${i}`, () => entry(`s-${i}`));
    const { store } = makeStore();
    const got = await Promise.all(Array.from({ length: 10 }, (_, i) => store.get(`k${i}`)));
    expect(got.map((e) => e?.sessionId)).toEqual(Array.from({ length: 10 }, (_, i) => `s-${i}`));
    expect(store.readCount).toBe(1);
    // Unchanged since: not read again.
    await store.get("k1");
    expect(store.readCount).toBe(1);
  });
});

describe("SessionStore write-behind (deferMs)", () => {
  it("deferred updates wait and are written together; a prompt update or flush writes them at once", async () => {
    const { store } = makeStore();
    await store.update("a", () => entry("s-a"));
    const before = await readFile(path, "utf8");
    const waiting = [
      store.update("a", (e) => ({ ...e!, inputTokens: 1 }), { deferMs: 1000 }),
      store.update("b", () => entry("s-b"), { deferMs: 1000 }),
    ];
    await new Promise((resolve) => setImmediate(resolve));
    expect(store.waitingUpdates).toBe(2);
    // Not written yet: the file and this process's reads are as they were.
    expect(await readFile(path, "utf8")).toBe(before);
    expect((await store.get("a"))?.inputTokens).toBeUndefined();
    clock.advance(20);
    const [a, b] = await Promise.all(waiting);
    expect(a?.inputTokens).toBe(1);
    expect(b?.sessionId).toBe("s-b");
    const onDisk = JSON.parse(await readFile(path, "utf8"));
    expect(Object.keys(onDisk)).toEqual(["a", "b"]);
    expect(onDisk.a.inputTokens).toBe(1);

    const later = store.update("c", () => entry("s-c"), { deferMs: 1000 });
    const prompt = store.update("d", () => entry("s-d"));
    await Promise.all([later, prompt]);
    expect(Object.keys(JSON.parse(await readFile(path, "utf8")))).toEqual(["a", "b", "c", "d"]);

    const last = store.update("e", () => entry("s-e"), { deferMs: 1000 });
    await store.flush();
    expect(store.waitingUpdates).toBe(0);
    expect((await last)?.sessionId).toBe("s-e");
    expect(JSON.parse(await readFile(path, "utf8")).e.sessionId).toBe("s-e");
  });

  it("a deferred update is applied to the file as it is when it is written (an edit meanwhile is kept)", async () => {
    const { store } = makeStore();
    await store.update("a", () => entry("s-a"));
    const waiting = store.update("a", (e) => ({ ...e!, inputTokens: (e?.inputTokens ?? 0) + 1 }), {
      deferMs: 1000,
    });
    const edited = JSON.parse(await readFile(path, "utf8"));
    edited.a.inputTokens = 41;
    edited.hand = entry("s-hand");
    await writeFile(path, `${JSON.stringify(edited, null, 2)}\n`);
    clock.advance(20);
    expect((await waiting)?.inputTokens).toBe(42);
    const onDisk = JSON.parse(await readFile(path, "utf8"));
    expect(onDisk.a.inputTokens).toBe(42);
    expect(onDisk.hand.sessionId).toBe("s-hand");
  });
});

describe("SessionStore getWithUpdates (this process's updates not written yet)", () => {
  const tokens = (n: number) => (e: SessionEntry | undefined) =>
    e ? { ...e, inputTokens: (e.inputTokens ?? 0) + n } : undefined;

  it("applies the waiting updates in order, without writing them; get and the file stay as they are", async () => {
    const { store } = makeStore();
    await store.update("a", () => entry("s-a", { inputTokens: 10 }));
    const before = await readFile(path, "utf8");
    const waiting = [
      store.update("a", tokens(1), { deferMs: 1000 }),
      store.update("a", (e) => (e ? { ...e, inputTokens: (e.inputTokens ?? 0) * 2 } : e), { deferMs: 1000 }),
      store.update("b", () => entry("s-b"), { deferMs: 1000 }),
    ];
    // (10 + 1) * 2: in the order they were made.
    expect((await store.getWithUpdates("a"))?.inputTokens).toBe(22);
    expect((await store.getWithUpdates("b"))?.sessionId).toBe("s-b");
    expect((await store.get("a"))?.inputTokens).toBe(10);
    expect(await store.get("b")).toBeUndefined();
    expect(await readFile(path, "utf8")).toBe(before);
    expect(store.waitingUpdates).toBe(3);
    // One more made since the last read joins what was applied.
    waiting.push(store.update("a", tokens(100), { deferMs: 1000 }));
    expect((await store.getWithUpdates("a"))?.inputTokens).toBe(122);
    expect((await store.getWithUpdates("a"))?.inputTokens).toBe(122);
    await store.flush();
    await Promise.all(waiting);
    expect(JSON.parse(await readFile(path, "utf8")).a.inputTokens).toBe(122);
  });

  it("never applies an update twice: at no point of its write, nor after it", async () => {
    const { store } = makeStore();
    await store.update("a", () => entry("s-a", { inputTokens: 0 }));
    const update = store.update("a", tokens(1), { deferMs: 1000 });
    const seen = new Set<number | undefined>();
    let written = false;
    const writing = store.flush().then(() => {
      written = true;
    });
    // Read at every turn of the event loop while the batch takes the lock, writes, renames, syncs and releases.
    while (!written) {
      seen.add((await store.getWithUpdates("a"))?.inputTokens);
      await new Promise((resolve) => setImmediate(resolve));
    }
    await writing;
    await update;
    seen.add((await store.getWithUpdates("a"))?.inputTokens);
    expect([...seen]).toEqual([1]);
    expect((await store.get("a"))?.inputTokens).toBe(1);
  });

  it("reads right around the rename see the update once: in the list before it, in the image after", async () => {
    // Saved by hand on one line: not the store's layout, so the write is whole and installs a new image.
    await mkdir(join(dir, "sessions"), { recursive: true });
    await writeFile(path, JSON.stringify({ a: entry("s-a", { inputTokens: 0 }) }));
    const { store } = makeStore();
    expect((await store.get("a"))?.inputTokens).toBe(0);
    const update = store.update("a", tokens(1), { deferMs: 1000 });
    // The last await of the write before its rename: reads start at each of the microtasks that follow it, so
    // that some of them span the rename (a read that found the image and the list apart would see 0 or 2).
    const internals = store as unknown as { beforeRename: (...args: unknown[]) => Promise<void> };
    const beforeRename = internals.beforeRename.bind(store);
    const reads: Promise<number | undefined>[] = [];
    internals.beforeRename = async (...args: unknown[]) => {
      await beforeRename(...args);
      const next = () => {
        reads.push(store.getWithUpdates("a").then((e) => e?.inputTokens));
        if (reads.length < 8) queueMicrotask(next);
      };
      queueMicrotask(next);
    };
    await store.flush();
    await update;
    expect(reads).toHaveLength(8);
    expect(await Promise.all(reads)).toEqual(Array(8).fill(1));
  });

  it("applies the updates to the entry another writer left, as their write will", async () => {
    const { store } = makeStore();
    await store.update("a", () => entry("s-a", { inputTokens: 1 }));
    const update = store.update("a", tokens(1), { deferMs: 1000 });
    expect((await store.getWithUpdates("a"))?.inputTokens).toBe(2);
    const edited = JSON.parse(await readFile(path, "utf8"));
    edited.a.inputTokens = 41;
    await writeFile(path, `${JSON.stringify(edited, null, 2)}\n`);
    expect((await store.getWithUpdates("a"))?.inputTokens).toBe(42);
    await store.flush();
    expect((await update)?.inputTokens).toBe(42);
  });

  it("leaves out an update whose function throws, as its write does", async () => {
    const { store } = makeStore();
    await store.update("a", () => entry("s-a", { inputTokens: 1 }));
    const bad = store.update(
      "a",
      () => {
        throw new Error("no");
      },
      { deferMs: 1000 },
    );
    const good = store.update("a", tokens(1), { deferMs: 1000 });
    expect((await store.getWithUpdates("a"))?.inputTokens).toBe(2);
    await store.flush();
    await expect(bad).rejects.toThrow("no");
    expect((await good)?.inputTokens).toBe(2);
    expect((await store.getWithUpdates("a"))?.inputTokens).toBe(2);
  });

  it("forgets an update that changed nothing once its batch ran", async () => {
    const { store } = makeStore();
    await store.update("a", () => entry("s-a"));
    // No entry to change: the update leaves the file as it is.
    const none = store.update("gone", (e) => e, { deferMs: 1000 });
    await store.flush();
    expect(await none).toBeUndefined();
    // Another process then makes the key: it is shown as that process wrote it.
    const other = makeStore().store;
    await other.update("gone", () => entry("s-gone", { updatedAt: 7 }));
    expect((await store.getWithUpdates("gone"))?.updatedAt).toBe(7);
  });

  it("shows the updates of a batch that cannot be written until it fails, then the file as it is", async () => {
    const mount = join(dir, "full");
    await mkdir(mount);
    await mountTmpfs(mount, 64 * 1024);
    try {
      const store = new SessionStore({
        path: join(mount, "sessions.json"),
        logger: createMemoryLogger().logger,
        clock,
      });
      await store.update("a", () => entry("s-a", { inputTokens: 1 }));
      await fillDisk(join(mount, "filler"));
      const lost = store.update("a", tokens(1), { deferMs: 1000 });
      expect((await store.getWithUpdates("a"))?.inputTokens).toBe(2);
      await store.flush();
      await expect(lost).rejects.toThrow();
      expect((await store.getWithUpdates("a"))?.inputTokens).toBe(1);
    } finally {
      await unmount(mount);
    }
  });
});

describe("SessionStore with a store that does not parse", () => {
  it("on load: sets the bad file aside, says where, and carries on with the last good copy", async () => {
    const { store, lines } = makeStore();
    await store.update("main", () => entry("m"));
    await store.load();
    await writeFile(path, '{ "main": { "sessionId": "m", '); // a save cut short
    const map = await store.load();
    expect(map).toEqual({ main: { sessionId: "m", updatedAt: 1000 } });
    const bad = await badFiles();
    expect(bad).toEqual(["sessions.json.bad-2026-01-01T00-00-00-000Z"]);
    expect(await readFile(join(dir, "sessions", bad[0]!), "utf8")).toBe('{ "main": { "sessionId": "m", ');
    const warning = lines.find((l) => l.level === "warn");
    expect(warning?.message).toContain(join(dir, "sessions", bad[0]!));
    // The good copy is back in place, so other readers see it too.
    expect(JSON.parse(await readFile(path, "utf8"))).toEqual({ main: { sessionId: "m", updatedAt: 1000 } });
  });

  it("on update: never writes an empty map over the bad file, builds on the last good copy", async () => {
    const { store } = makeStore();
    await store.update("A", () => entry("a"));
    await store.update("B", () => entry("b"));
    await writeFile(path, "[1, 2, 3]\n");
    await store.update("C", () => entry("c"));
    expect(Object.keys(JSON.parse(await readFile(path, "utf8")))).toEqual(["A", "B", "C"]);
    const bad = await badFiles();
    expect(bad).toHaveLength(1);
    expect(await readFile(join(dir, "sessions", bad[0]!), "utf8")).toBe("[1, 2, 3]\n");
  });

  it("sets aside a store whose values are not objects, keeping earlier bad files", async () => {
    const { store } = makeStore();
    await store.update("A", () => entry("a"));
    await writeFile(path, '{"A": 5}');
    await store.load();
    await writeFile(path, '{"A": null}');
    await store.load();
    expect(await badFiles()).toHaveLength(2);
    expect(Object.keys(await store.load())).toEqual(["A"]);
  });

  it("without a good copy: rebuilds from the transcript headers, newest file per key", async () => {
    const sessions = join(dir, "sessions");
    const { mkdir } = await import("node:fs/promises");
    await mkdir(sessions, { recursive: true });
    const header = (id: string, key: string) =>
      `${JSON.stringify({ type: "session", version: 1, id, sessionKey: key, createdAt: "2026-01-01T00:00:00.000Z" })}\n`;
    const transcripts: [string, string, number][] = [
      ["old-main.jsonl", `${header("old-main", "main")}{"type":"message"}\n`, 1_000_000],
      ["new-main.jsonl", header("new-main", "main"), 3_000_000],
      ["grp.jsonl", header("grp", "group:-100"), 2_000_000],
      ["mismatch.jsonl", header("other-id", "stolen"), 4_000_000],
      ["plain.jsonl", '{"type":"message"}\n', 4_000_000],
      ["v2.jsonl", header("v2", "x").replace('"version":1', '"version":2'), 4_000_000],
      ["notes.txt", header("notes", "txt"), 4_000_000],
    ];
    for (const [name, text, mtime] of transcripts) {
      await writeFile(join(sessions, name), text);
      await utimes(join(sessions, name), mtime, mtime);
    }
    await writeFile(path, "not json at all");
    const { store, lines } = makeStore();
    const map = await store.load();
    expect(map).toEqual({
      main: { sessionId: "new-main", updatedAt: 3_000_000_000 },
      "group:-100": { sessionId: "grp", updatedAt: 2_000_000_000 },
    });
    expect(await badFiles()).toHaveLength(1);
    expect(lines.some((l) => l.level === "warn" && l.message.includes("rebuilt 2 sessions"))).toBe(true);
    expect(JSON.parse(await readFile(path, "utf8"))).toEqual(map);
  });
});

describe("SessionStore across processes", () => {
  it("keeps every update of 4 processes × 250 updates to distinct keys", async () => {
    const worker = fileURLToPath(new URL("../../test/fixtures/store-worker.ts", import.meta.url));
    const run = (prefix: string) =>
      new Promise<void>((resolve, reject) => {
        const child = spawn(process.execPath, ["--import", "tsx", worker, path, prefix, "250"], {
          stdio: ["ignore", "ignore", "pipe"],
        });
        let stderr = "";
        child.stderr.on("data", (chunk) => {
          stderr += String(chunk);
        });
        child.on("error", reject);
        child.on("exit", (code) =>
          code === 0 ? resolve() : reject(new Error(`worker ${prefix}: ${code} ${stderr}`)),
        );
      });
    await Promise.all(["p0", "p1", "p2", "p3"].map(run));
    const written = JSON.parse(await readFile(path, "utf8")) as Record<string, { sessionId: string }>;
    expect(Object.keys(written)).toHaveLength(1000);
    for (const prefix of ["p0", "p1", "p2", "p3"]) {
      for (let n = 0; n < 250; n++)
        expect(written[`${prefix}-${n}`]?.sessionId).toBe(`${prefix}-session-${n}`);
    }
  }, 120_000);
});
