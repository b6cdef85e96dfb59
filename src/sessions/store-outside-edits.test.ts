import { execFileSync } from "node:child_process";
import { readdirSync, renameSync, writeFileSync } from "node:fs";
import { mkdtemp, readdir, readFile, rename, rm, writeFile } from "node:fs/promises";
import { platform, release, tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { SeededRandom } from "../../test/fault/seeded-random.js";
import { ManualClock } from "../core/clock.js";
import { createMemoryLogger } from "../core/logger.js";
import { SessionStore } from "./store.js";
import { changeTimesAreFine, judgeChangeTimes } from "./store-fine-times.js";
import { parseStoreText, serializeStore } from "./store-parse.js";
import type { SessionEntry } from "./types.js";

type Raw = Record<string, Record<string, unknown>>;

let dir: string;
let path: string;
let clock: ManualClock;

beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), "clawdis-store-edits-"));
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

const onDisk = async (): Promise<Raw> => JSON.parse(await readFile(path, "utf8")) as Raw;
const pretty = (raw: Raw) => `${JSON.stringify(raw, null, 2)}\n`;
const note = (text: string) => (current: SessionEntry | undefined) => current && { ...current, note: text };

/** The usable map of a full parse of the file now, as [key, entry] pairs in order. */
async function fullParse(): Promise<string> {
  const parsed = parseStoreText(await readFile(path, "utf8"));
  if (!parsed.ok) throw new Error(parsed.reason);
  return JSON.stringify(Object.entries(parsed.map));
}

/** A store of 20 keys written by the store itself, then one more update (so the next one needs no read). */
async function twentyKeys(store: SessionStore): Promise<void> {
  for (let i = 0; i < 20; i++)
    await store.update(`k${i}`, () => ({ sessionId: `s-${i}`, updatedAt: 1000 + i }));
  await store.update("k0", note("warm"));
}

function saveByRename(text: string): void {
  writeFileSync(`${path}.editor`, text);
  renameSync(`${path}.editor`, path);
}

describe("an outside edit between two updates is never lost", () => {
  const edits: [string, (raw: Raw, text: string) => void, (after: Raw) => void][] = [
    [
      "in place, same size, within one clock tick of our write",
      (_, text) => writeFileSync(path, text.replace('"updatedAt": 1005', '"updatedAt": 2005')),
      (after) => expect(after.k5?.updatedAt).toBe(2005),
    ],
    [
      "by rename",
      (raw) => saveByRename(pretty({ ...raw, k5: { ...raw.k5, note: "by hand" } })),
      (after) => expect(after.k5?.note).toBe("by hand"),
    ],
    [
      "growing an entry",
      (raw) => saveByRename(pretty({ ...raw, k5: { ...raw.k5, long: "x".repeat(5000) } })),
      (after) => expect(after.k5?.long).toHaveLength(5000),
    ],
    [
      "shrinking an entry",
      (raw) => writeFileSync(path, pretty({ ...raw, k0: { sessionId: "s-0", updatedAt: 1 } })),
      (after) => expect(after.k0).toEqual({ sessionId: "s-0", updatedAt: 1 }),
    ],
    [
      "deleting a key",
      (raw) => {
        const { k5: _, ...rest } = raw;
        saveByRename(pretty(rest));
      },
      (after) => expect(Object.keys(after)).not.toContain("k5"),
    ],
    [
      "adding a key",
      (raw) => saveByRename(pretty({ ...raw, added: { sessionId: "a-1", updatedAt: 5 } })),
      (after) => expect(after.added).toEqual({ sessionId: "a-1", updatedAt: 5 }),
    ],
    [
      "reordering keys",
      (raw) => saveByRename(pretty(Object.fromEntries(Object.entries(raw).reverse()))),
      (after) => expect(Object.keys(after)[0]).toBe("k19"),
    ],
    [
      "in a layout of its own (compact, with a byte order mark)",
      (raw) => saveByRename(`\ufeff${JSON.stringify({ ...raw, k5: { ...raw.k5, note: "compact" } })}`),
      (after) => expect(after.k5?.note).toBe("compact"),
    ],
    [
      "in a layout of its own (tabs and CRLF)",
      (raw) =>
        writeFileSync(
          path,
          JSON.stringify({ ...raw, k7: { ...raw.k7, note: "tabs" } }, null, "\t").replace(/\n/g, "\r\n"),
        ),
      (after) => expect(after.k7?.note).toBe("tabs"),
    ],
  ];

  it.each(edits)("%s", async (_, edit, check) => {
    const { store } = makeStore();
    await twentyKeys(store);
    edit(await onDisk(), await readFile(path, "utf8"));
    await store.update("k1", note("after the edit"));
    const after = await onDisk();
    check(after);
    expect(after.k1?.note).toBe("after the edit");
    // Written back in the store's own layout, and what the store holds is a full parse of the file.
    expect(await readFile(path, "utf8")).toBe(serializeStore(after));
    expect(JSON.stringify(Object.entries(await store.load()))).toBe(await fullParse());
    // A fresh reader agrees.
    expect(JSON.stringify(Object.entries(await makeStore().store.load()))).toBe(await fullParse());
  });

  it("in place, same size, with the modification time set back as it was (cp -p, touch -r)", async () => {
    const { store } = makeStore();
    await twentyKeys(store);
    const reference = `${path}.reference`;
    execFileSync("cp", ["-p", path, reference]);
    const text = await readFile(path, "utf8");
    writeFileSync(path, text.replace('"updatedAt": 1005', '"updatedAt": 2005'));
    execFileSync("touch", ["-r", reference, path]);
    await store.update("k1", note("after the edit"));
    expect((await onDisk()).k5?.updatedAt).toBe(2005);
  });

  it("JSON5 with comments does not parse: it is set aside, whole, and the store carries on", async () => {
    const { store } = makeStore();
    await twentyKeys(store);
    const json5 = `// by hand\n${(await readFile(path, "utf8")).replace('"k5": {', '"k5": { note: "json5",')}`;
    saveByRename(json5);
    await store.update("k1", note("after the edit"));
    const bad = (await readdir(join(dir, "sessions"))).filter((n) => n.startsWith("sessions.json.bad-"));
    expect(bad).toHaveLength(1);
    expect(await readFile(join(dir, "sessions", bad[0]!), "utf8")).toBe(json5);
    const after = await onDisk();
    expect(Object.keys(after)).toHaveLength(20);
    expect(after.k1?.note).toBe("after the edit");
  });
});

describe("reading only when someone else wrote", () => {
  it("neither updates nor reads read the file while nobody else writes it", async () => {
    const { store } = makeStore();
    for (let i = 0; i < 30; i++) {
      await store.update(`k${i % 7}`, (current) => ({
        sessionId: `s-${i % 7}`,
        updatedAt: 1,
        n: ((current?.n as number | undefined) ?? 0) + 1,
      }));
      expect(await store.get(`k${i % 7}`)).toMatchObject({ n: Math.floor(i / 7) + 1 });
      await store.load();
    }
    expect(store.readCount).toBe(0);
    expect(store.parseCount).toBe(0);
  });

  it("after an outside edit: read once, parse only that, then no more reads", async () => {
    const { store } = makeStore();
    await twentyKeys(store);
    expect(store.readCount).toBe(0);
    const raw = await onDisk();
    saveByRename(pretty({ ...raw, k9: { ...raw.k9, note: "edited" } }));
    expect((await store.get("k9"))?.note).toBe("edited");
    expect(store.readCount).toBe(1);
    expect(store.parseCount).toBe(1);
    await store.update("k3", note("x"));
    const reads = store.readCount;
    // With fine change times that read was proof enough. Else a version someone else wrote, within a clock tick
    // of its save, is compared again by the update: under the lock, and right before the rename.
    if (changeTimesAreFine(join(dir, "sessions"))) expect(reads).toBe(1);
    else expect(reads).toBeLessThanOrEqual(3);
    for (let i = 0; i < 10; i++) await store.update(`k${i}`, note(`n${i}`));
    await store.load();
    expect(store.readCount).toBe(reads);
    expect(store.parseCount).toBe(1);
    expect((await onDisk()).k9?.note).toBe("n9");
  });

  it("an outside edit of whole entries is patched into the bytes held, in place: no buffer the size of the file", async () => {
    const { store } = makeStore();
    await twentyKeys(store);
    const held = () => (store as unknown as { image: { buffer: Buffer; bytes: Buffer } }).image;
    const before = held().buffer.buffer;
    const raw = await onDisk();
    saveByRename(pretty({ ...raw, k9: { ...raw.k9, note: "edited by hand" }, k2: { ...raw.k2, n: 7 } }));
    expect((await store.get("k9"))?.note).toBe("edited by hand");
    expect((await store.get("k2"))?.n).toBe(7);
    expect(held().buffer.buffer, "the same memory, patched").toBe(before);
    expect(held().bytes.equals(await readFile(path)), "the bytes held are the file's").toBe(true);
    expect(store.parseCount).toBe(1);
    // A change that is not one of whole entries in the layout (the file's spacing) is read and parsed whole.
    writeFileSync(path, JSON.stringify({ ...raw, k1: { ...raw.k1, note: "one line" } }));
    expect((await store.get("k1"))?.note).toBe("one line");
    expect(store.parseCount).toBe(2);
    expect(held().bytes.equals(await readFile(path))).toBe(true);
  });

  it("readers do not read again and again a version someone else just saved", async () => {
    const { store } = makeStore();
    await twentyKeys(store);
    const raw = await onDisk();
    saveByRename(pretty({ ...raw, k9: { ...raw.k9, note: "edited" } }));
    for (let i = 0; i < 50; i++) expect((await store.get("k9"))?.note).toBe("edited");
    // Once to see it, and once more at most when it was seen within a clock tick of the save.
    expect(store.readCount).toBeLessThanOrEqual(2);
  });

  it("hands out maps that never change afterwards", async () => {
    const { store } = makeStore();
    await store.update("a", () => ({ sessionId: "a", updatedAt: 1 }));
    const first = await store.load();
    const before = JSON.stringify(first);
    await store.update("a", note("changed"));
    await store.update("b", () => ({ sessionId: "b", updatedAt: 2 }));
    expect(JSON.stringify(first)).toBe(before);
    const second = await store.load();
    expect(second).not.toBe(first);
    expect(second.a?.note).toBe("changed");
    expect(await store.load()).toBe(second);
  });
});

describe("changeTimesAreFine", () => {
  it("finds them where the kernel gives each change its own time, and leaves no file behind", () => {
    const fine = changeTimesAreFine(dir);
    expect(readdirSync(dir)).toEqual([]);
    // Linux 6.13 and later: multigrain timestamps on ext4, xfs, btrfs and tmpfs (this machine's temp folder).
    const [major = 0, minor = 0] = release().split(".").map(Number);
    if (platform() === "linux" && (major > 6 || (major === 6 && minor >= 13))) expect(fine).toBe(true);
  });

  it.each([
    ["every change a later time, quickly", [1n, 2n, 3n, 4n, 5n, 6n, 7n, 8n, 9n], 50_000n, "fine"],
    ["two changes in one tick", [1n, 2n, 3n, 3n, 5n, 6n, 7n, 8n, 9n], 50_000n, "coarse"],
    ["a time going back", [1n, 2n, 3n, 4n, 2n, 6n, 7n, 8n, 9n], 50_000n, "coarse"],
    [
      "every change a later time, but slowly (a tick may have passed each time)",
      [1n, 2n, 3n, 4n, 5n, 6n, 7n, 8n, 9n],
      400_000n,
      "too slow",
    ],
    ["too few changes", [1n, 2n], 1_000n, "coarse"],
  ] as const)("judges %s", (_, ctimes, elapsed, verdict) => {
    expect(judgeChangeTimes(ctimes, elapsed)).toBe(verdict);
  });

  it("tries again a probe that was too slow to say anything, a few times", () => {
    const answers = (...list: ("fine" | "coarse" | "too slow")[]) => {
      const left = [...list];
      return () => left.shift() ?? "too slow";
    };
    expect(changeTimesAreFine(dir, answers("too slow", "too slow", "fine"))).toBe(true);
    expect(changeTimesAreFine(dir, answers("too slow", "coarse", "fine"))).toBe(false);
    expect(changeTimesAreFine(dir, answers())).toBe(false);
  });

  it("is false where it cannot probe", () => {
    expect(changeTimesAreFine(join(dir, "no such folder"))).toBe(false);
  });
});

/** Seeded (the fault suite's generator), so that a failing run can be replayed: `int(n)` is in [0, n). */
function random(seed: number) {
  const r = new SeededRandom(seed);
  return { next: () => r.next(), int: (n: number) => r.int(0, n - 1) };
}

describe("updates and outside edits in any order (seeded)", () => {
  it.each([1, 2, 3])("seed %i: the file always holds every update and every edit", async (seed) => {
    const r = random(seed);
    const { store } = makeStore();
    let expected: Raw = {};
    for (let step = 0; step < 120; step++) {
      const key = `k${r.int(25)}`;
      const op = r.int(10);
      if (op < 5) {
        const value = r.int(1000);
        const stored = await store.update(key, (current) => ({
          sessionId: current?.sessionId ?? `s-${key}`,
          updatedAt: 1,
          v: value,
        }));
        expected = { ...expected, [key]: stored as Record<string, unknown> };
      } else if (op === 5) {
        if (!(key in expected)) continue;
        await store.update(key, () => undefined);
        const { [key]: _, ...rest } = expected;
        expected = rest;
      } else if (op < 9) {
        // Another writer: one field of one entry, an added or a deleted key, or the order; by rename or in place.
        const raw = await onDisk().catch(() => ({}) as Raw);
        const edited: Raw = { ...raw };
        if (r.next() < 0.3) delete edited[key];
        else edited[key] = { ...(raw[key] ?? { sessionId: `s-${key}` }), updatedAt: 7, hand: r.int(1e6) };
        const ordered = r.next() < 0.2 ? Object.fromEntries(Object.entries(edited).reverse()) : edited;
        const text = r.next() < 0.2 ? JSON.stringify(ordered) : pretty(ordered);
        if (r.next() < 0.5) await writeFile(path, text);
        else {
          await writeFile(`${path}.editor`, text);
          await rename(`${path}.editor`, path);
        }
        expected = JSON.parse(text) as Raw;
      } else {
        expect(JSON.stringify(Object.entries(await store.load())), `step ${step}`).toBe(await fullParse());
      }
      if (step % 10 === 9 || op < 6) {
        // Nothing lost: the file holds exactly the updates and edits so far (in the file's own order).
        const now = await onDisk().catch(() => ({}) as Raw);
        expect(Object.keys(now).sort(), `step ${step}`).toEqual(Object.keys(expected).sort());
        for (const k of Object.keys(expected)) expect(now[k], `step ${step} ${k}`).toEqual(expected[k]);
      }
    }
  });
});
