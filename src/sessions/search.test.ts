import { mkdir, mkdtemp, rm, utimes, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { searchTranscripts } from "./search.js";
import { SEARCH_CHUNK_BYTES } from "./search-file.js";
import { parseSearchRequest, type SearchRequest } from "./search-request.js";
import type { SessionMap } from "./types.js";

/** Transcripts in a temp store, searched as `clawdis sessions search` does. */
let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), "clawdis-search-"));
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

const T0 = Date.parse("2026-02-01T00:00:00Z");
const header = (id: string, key: string) =>
  JSON.stringify({ type: "session", version: 1, id, sessionKey: key, createdAt: new Date(T0).toISOString() });
const message = (n: number, role: string, content: string) =>
  JSON.stringify({
    type: "message",
    id: `e${n}`,
    ts: new Date(T0 + n * 60_000).toISOString(),
    message: { role, content },
  });

async function transcript(id: string, lines: string[], mtime: number, folder = dir): Promise<void> {
  const path = join(folder, `${id}.jsonl`);
  await writeFile(path, `${lines.join("\n")}\n`);
  await utimes(path, mtime / 1000, mtime / 1000);
}

async function search(request: SearchRequest, map: SessionMap = {}, now = T0 + 86_400_000) {
  const options = parseSearchRequest(request, now);
  if (typeof options === "string") throw new Error(options);
  return searchTranscripts(join(dir, "sessions.json"), map, options);
}

const ids = (report: Awaited<ReturnType<typeof search>>) =>
  report.hits.map((h) => `${h.sessionId}/${h.entryId}`);

describe("searching the transcripts", () => {
  it("returns files newest first, lines newest first, with keys from the store or the header", async () => {
    await transcript(
      "old",
      [header("old", "main"), message(1, "user", "deploy A"), message(2, "assistant", "deploy B")],
      T0 + 1000,
    );
    await transcript(
      "new",
      [header("new", "main"), message(3, "user", "deploy C"), message(4, "tool", "DEPLOY d")],
      T0 + 5000,
    );
    await transcript("grp", [header("grp", "group:x"), message(5, "user", "no match")], T0 + 9000);
    const map: SessionMap = { main: { sessionId: "new", updatedAt: T0 } };
    const report = await search({ q: "deploy" }, map);
    expect(ids(report)).toEqual(["new/e4", "new/e3", "old/e2", "old/e1"]);
    expect(report.hits.map((h) => [h.sessionKey, h.current])).toEqual([
      ["main", true],
      ["main", true],
      ["main", false],
      ["main", false],
    ]);
    expect(report.hits[0]).toMatchObject({ role: "tool", ts: new Date(T0 + 4 * 60_000).toISOString() });
    expect(report.hits[0]!.snippet).toEqual({ text: "DEPLOY d", start: 0, end: 6 });
    expect(report).toMatchObject({ limited: false, transcripts: 3 });
  });

  it("filters by key, role and since, and stops at the limit", async () => {
    await transcript(
      "a",
      [
        header("a", "main"),
        ...Array.from({ length: 10 }, (_, i) => message(i, i % 2 ? "assistant" : "user", `note ${i}`)),
      ],
      T0 + 9 * 60_000 + 1000,
    );
    await transcript("b", [header("b", "group:1"), message(100, "user", "note b")], T0 + 100 * 60_000 + 1000);
    expect(ids(await search({ q: "note", key: "main", limit: "3" }))).toEqual(["a/e9", "a/e8", "a/e7"]);
    expect((await search({ q: "note", key: "main", limit: "3" })).limited).toBe(true);
    expect(ids(await search({ q: "note", role: "user", key: "main", limit: "2" }))).toEqual(["a/e8", "a/e6"]);
    // since: entries at T0 + n min; "now" is T0 + 10 min, so 3m keeps e7.. (e100 is in b, newer).
    expect(ids(await search({ q: "note", since: "3m" }, {}, T0 + 10 * 60_000))).toEqual([
      "b/e100",
      "a/e9",
      "a/e8",
      "a/e7",
    ]);
  });

  it("takes the key of a transcript not in the store from its header, however long the header", async () => {
    const long = JSON.stringify({
      type: "session",
      version: 1,
      id: "h",
      sessionKey: "group:long",
      note: "n".repeat(10_000),
    });
    await transcript("h", [long, message(1, "user", "note")], T0);
    await transcript("x", ["not a header", message(2, "user", "note")], T0 + 1000);
    expect((await search({ q: "note" })).hits.map((h) => [h.sessionId, h.sessionKey, h.current])).toEqual([
      ["x", null, false],
      ["h", "group:long", false],
    ]);
    expect(ids(await search({ q: "note", key: "group:long" }))).toEqual(["h/e1"]);
  });

  it("finds the transcripts of pruned sessions in the archive too, in the same newest-first order", async () => {
    const archive = join(dir, "archive");
    await mkdir(archive);
    await transcript("kept", [header("kept", "main"), message(1, "user", "plum")], T0 + 5000);
    await transcript(
      "gone",
      [header("gone", "group:old"), message(2, "user", "plum pie")],
      T0 + 1000,
      archive,
    );
    await transcript(
      "newer",
      [header("newer", "group:x"), message(3, "user", "plum jam")],
      T0 + 9000,
      archive,
    );
    const report = await search({ q: "plum" }, { main: { sessionId: "kept", updatedAt: T0 } });
    expect(report.hits.map((h) => [h.sessionId, h.sessionKey, h.current])).toEqual([
      ["newer", "group:x", false],
      ["kept", "main", true],
      ["gone", "group:old", false],
    ]);
  });

  it("skips files last modified before --since without reading them", async () => {
    await transcript("a", [header("a", "main"), message(1, "user", "note")], T0 - 5 * 86_400_000);
    const report = await search({ q: "note", since: "1d" });
    expect(report).toMatchObject({ hits: [], transcripts: 0, bytesRead: 0 });
  });

  it("finds a match inside a JSON-escaped string, and a regex", async () => {
    await transcript("a", [header("a", "main"), message(1, "user", 'she said "yes"\nand left \\ fast')], T0);
    expect(ids(await search({ q: 'said "yes" and' }))).toEqual([]); // the newline is not a space
    expect(ids(await search({ q: 'said "yes"\nand left \\' }))).toEqual(["a/e1"]);
    expect(ids(await search({ q: 's[a-z]+ "y', regex: true }))).toEqual(["a/e1"]);
  });

  it("reads lines across chunk boundaries, newest first, and stops reading at the limit", async () => {
    const lines = [header("big", "main")];
    for (let i = 0; i < 3000; i++) lines.push(message(i, "user", `entry ${i} ${"pad ".repeat(i % 50)}`));
    await transcript("big", lines, T0);
    const all = await search({ q: "entry", limit: "1000" });
    expect(ids(all)).toEqual(Array.from({ length: 1000 }, (_, i) => `big/e${2999 - i}`));
    const few = await search({ q: "entry", limit: "5" });
    expect(ids(few)).toEqual(["big/e2999", "big/e2998", "big/e2997", "big/e2996", "big/e2995"]);
    expect(few.bytesRead).toBeLessThanOrEqual(SEARCH_CHUNK_BYTES);
    // Every line, every chunk boundary: none missed, none twice.
    const every = await search({ q: "entry", regex: true, limit: "1000", role: "user" });
    expect(ids(every)).toEqual(ids(all));
  });

  it("passes over a line longer than the limit and bad lines, and finds the lines around them", async () => {
    const long = message(2, "user", `needle ${"z".repeat(200_000)}`);
    await transcript(
      "a",
      [
        header("a", "main"),
        message(1, "user", "needle one"),
        "not json needle",
        long,
        message(3, "user", "needle three"),
      ],
      T0,
    );
    const { searchFile } = await import("./search-file.js");
    const options = parseSearchRequest({ q: "needle" }, T0);
    if (typeof options === "string") throw new Error(options);
    const found: string[] = [];
    for await (const hit of searchFile(join(dir, "a.jsonl"), {
      matcher: options.matcher,
      maxLineBytes: 100_000,
    }))
      found.push(hit.entryId);
    expect(found).toEqual(["e3", "e1"]);
    expect(ids(await search({ q: "needle" }))).toEqual(["a/e3", "a/e2", "a/e1"]);
  });
});
