import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parseHeaderLine, readFirstLine, rebuildFromTranscripts } from "./store-rebuild.js";

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "clawdis-rebuild-"));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

async function firstLineOf(text: string | Buffer, maxBytes?: number): Promise<string | undefined> {
  const path = join(dir, `f-${Math.random().toString(36).slice(2)}`);
  await writeFile(path, text);
  return readFirstLine(path, maxBytes);
}

describe("readFirstLine", () => {
  it.each([
    ["a\nb\n", "a"],
    ["a\r\nb", "a"],
    ["only line", "only line"],
    ["\nsecond", ""],
    ["", undefined],
  ])("%j -> %j", async (text, expected) => {
    expect(await firstLineOf(text)).toBe(expected);
  });

  it("finds a newline beyond the first read chunk", async () => {
    const long = "x".repeat(10_000);
    expect(await firstLineOf(`${long}\nrest`)).toBe(long);
  });

  it("gives up on a first line longer than the limit, and on a missing file", async () => {
    expect(await firstLineOf(`${"x".repeat(100)}\n`, 50)).toBeUndefined();
    expect(await readFirstLine(join(dir, "missing"))).toBeUndefined();
  });

  it("keeps multi-byte characters split across chunks", async () => {
    const text = `${"x".repeat(4095)}é\n`;
    expect(await firstLineOf(text)).toBe(`${"x".repeat(4095)}é`);
  });
});

describe("parseHeaderLine", () => {
  const header = {
    type: "session",
    version: 1,
    id: "abc",
    sessionKey: "main",
    createdAt: "2026-01-01T00:00:00Z",
  };
  it("accepts a version-1 header", () => {
    expect(parseHeaderLine(JSON.stringify(header))).toEqual({ sessionId: "abc", sessionKey: "main" });
  });
  it.each([
    ["not json", "{"],
    ["another type", JSON.stringify({ ...header, type: "message" })],
    ["another version", JSON.stringify({ ...header, version: 2 })],
    ["an unsafe id", JSON.stringify({ ...header, id: "../x" })],
    ["no key", JSON.stringify({ ...header, sessionKey: undefined })],
  ])("refuses %s", (_, line) => {
    expect(parseHeaderLine(line)).toBeUndefined();
  });
});

describe("rebuildFromTranscripts", () => {
  it("keeps a sessionKey such as __proto__ or constructor as an own key of a map without prototype", async () => {
    const store = join(dir, "rebuild-keys");
    await mkdir(store);
    for (const [id, key] of [
      ["p-1", "__proto__"],
      ["c-1", "constructor"],
    ]) {
      const header = { type: "session", version: 1, id, sessionKey: key, createdAt: "2026-01-01T00:00:00Z" };
      await writeFile(join(store, `${id}.jsonl`), `${JSON.stringify(header)}\n`);
    }
    const { map } = await rebuildFromTranscripts(store);
    expect(Object.getPrototypeOf(map)).toBeNull();
    expect(Object.keys(map).sort()).toEqual(["__proto__", "constructor"]);
    expect(Object.getOwnPropertyDescriptor(map, "__proto__")?.value?.sessionId).toBe("p-1");
    expect(Object.getOwnPropertyDescriptor(map, "constructor")?.value?.sessionId).toBe("c-1");
  });

  it("sees only transcripts: session folders beside them (even one named like a transcript) are skipped", async () => {
    const store = join(dir, "rebuild-folders");
    const header = {
      type: "session",
      version: 1,
      id: "s-1",
      sessionKey: "main",
      createdAt: "2026-01-01T00:00:00Z",
    };
    await mkdir(join(store, "s-1", "logs"), { recursive: true });
    await writeFile(join(store, "s-1", "logs", "session.log"), "x\n");
    await mkdir(join(store, "odd.jsonl"));
    await writeFile(join(store, "s-1.jsonl"), `${JSON.stringify(header)}\n`);
    const { map } = await rebuildFromTranscripts(store);
    expect(Object.keys(map)).toEqual(["main"]);
    expect(map.main?.sessionId).toBe("s-1");
  });

  it("takes only transcripts the gateway would open: named by a safe id that their header repeats", async () => {
    const store = join(dir, "rebuild-names");
    await mkdir(store);
    const head = (id: string, sessionKey: string) =>
      `${JSON.stringify({ type: "session", version: 1, id, sessionKey, createdAt: "2026-01-01T00:00:00Z" })}\n`;
    await writeFile(join(store, "good.jsonl"), head("good", "main"));
    // A header that names another file: its entry would point at a transcript that is not this one.
    await writeFile(join(store, "copy.jsonl"), head("good", "second"));
    // A name the gateway refuses as a session id.
    await writeFile(join(store, "bad id.jsonl"), head("bad id", "third"));
    await writeFile(join(store, "notes.txt"), head("notes", "fourth"));
    const { map, scanned } = await rebuildFromTranscripts(store);
    expect(scanned).toBe(3);
    expect(Object.fromEntries(Object.entries(map).map(([key, e]) => [key, e.sessionId]))).toEqual({
      main: "good",
    });
  });
});
