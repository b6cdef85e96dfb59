import { execFileSync } from "node:child_process";
import { closeSync, fstatSync, openSync, realpathSync } from "node:fs";
import { mkdtemp, open, rm, stat, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { descriptorsOn } from "../../test/helpers/open-descriptors.js";
import { makeHeader, readTranscript } from "./transcript.js";
import { readTranscriptPage } from "./transcript-page.js";
import {
  dropLeadingToolResults,
  RESUME_HARD_CAP_BYTES,
  RESUME_MIN_BYTES,
  readTranscriptForResume,
  resumeBudgetBytes,
} from "./transcript-resume.js";
import type { MessageEntry, StoredChatMessage, TranscriptEntry } from "./types.js";

let dir: string;
let counter = 0;
/** ~50 MB: a header, 50,000 message lines of ~1 KB, then "the newest". */
let hugePath: string;
beforeAll(async () => {
  // Real path: /proc/self/fd shows each descriptor's file by it.
  dir = realpathSync(await mkdtemp(join(tmpdir(), "clawdis-resume-")));
  hugePath = join(dir, "huge.jsonl");
  const filler = line(msg("f".repeat(1000)));
  const block = Buffer.from(filler.repeat(1000));
  const handle = await open(hugePath, "w");
  await handle.write(headerLine);
  for (let i = 0; i < 50; i++) await handle.write(block);
  await handle.write(line(msg("the newest")));
  await handle.close();
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

const headerLine = `${JSON.stringify(makeHeader("s1", "main", new Date(Date.UTC(2026, 0, 1))))}\n`;
const TS = "2026-01-01T00:00:00.000Z";

function msg(content: string | null, role: StoredChatMessage["role"] = "user", extra = {}): MessageEntry {
  counter++;
  return { type: "message", id: `e${counter}`, ts: TS, message: { role, content, ...extra } };
}
const call = (id: string) =>
  msg(null, "assistant", {
    tool_calls: [{ id, type: "function", function: { name: "bash", arguments: "{}" } }],
  });
const result = (id: string, text: string) => msg(text, "tool", { tool_call_id: id });
const compaction = (notes: string): TranscriptEntry => ({
  type: "compaction",
  id: `c${++counter}`,
  ts: TS,
  notes,
});
const line = (entry: TranscriptEntry) => `${JSON.stringify(entry)}\n`;

async function file(name: string, ...lines: string[]): Promise<string> {
  const path = join(dir, name);
  await writeFile(path, lines.join(""));
  return path;
}

const texts = (entries: TranscriptEntry[]) =>
  entries.map((e) =>
    e.type === "message" ? ((e as MessageEntry).message.content ?? "<call>") : `<${e.type}>`,
  );

describe("resumeBudgetBytes", () => {
  it.each([
    [128_000, 1_024_000],
    [32_000, 256_000],
    [1, RESUME_MIN_BYTES],
    [10_000_000, RESUME_HARD_CAP_BYTES],
    [Number.POSITIVE_INFINITY, RESUME_HARD_CAP_BYTES],
  ])("%d tokens -> %d bytes", (tokens, bytes) => {
    expect(resumeBudgetBytes(tokens)).toBe(bytes);
  });
});

describe("dropLeadingToolResults", () => {
  it.each([
    {
      name: "results before the first message go",
      in: ["tool", "tool", "user", "tool"],
      out: ["user", "tool"],
    },
    { name: "other entry types stay", in: ["event", "tool", "assistant"], out: ["event", "assistant"] },
    { name: "nothing to drop", in: ["user", "assistant"], out: ["user", "assistant"] },
    { name: "only results", in: ["tool"], out: [] },
  ])("$name", ({ in: input, out }) => {
    const entries: TranscriptEntry[] = input.map((kind) =>
      kind === "event" ? { type: "event", id: "x", ts: TS } : msg("t", kind as StoredChatMessage["role"]),
    );
    const dropped = dropLeadingToolResults(entries);
    expect(entries.map((e) => (e.type === "message" ? (e as MessageEntry).message.role : e.type))).toEqual(
      out,
    );
    expect(dropped).toBe(input.length - out.length);
  });
});

describe("readTranscriptForResume with a budget", () => {
  it("reads only the entries that start within maxBytes of the end, and says how much it left out", async () => {
    const lines = ["a", "b", "c", "d", "e"].map((t) => line(msg(t.repeat(50))));
    const path = await file("budget.jsonl", headerLine, ...lines);
    const size = (await stat(path)).size;
    const lastTwo = (lines[3] as string).length + (lines[4] as string).length;
    const resume = await readTranscriptForResume(path, { maxBytes: lastTwo, hardCapBytes: lastTwo });
    expect(texts(resume.entries)).toEqual(["d".repeat(50), "e".repeat(50)]);
    expect(resume.compaction).toBeUndefined();
    expect(resume.header?.id).toBe("s1");
    expect(resume.budgetCut).toEqual({
      bytesLeftOut: size - headerLine.length - lastTwo,
      toolResultsDropped: 0,
    });
    // Line 1 (one read of the small file's first 4 KiB) plus the tail and the one byte before it.
    expect(resume.bytesRead).toBeLessThanOrEqual(size + lastTwo + 1);
    // One byte less and line "d" no longer fits.
    const tighter = await readTranscriptForResume(path, { maxBytes: lastTwo - 1, hardCapBytes: lastTwo - 1 });
    expect(texts(tighter.entries)).toEqual(["e".repeat(50)]);
  });

  it("stops at the newest compaction when it comes before the budget", async () => {
    const path = await file(
      "compaction.jsonl",
      headerLine,
      line(msg("old")),
      line(compaction("n")),
      line(msg("x")),
    );
    const resume = await readTranscriptForResume(path, { maxBytes: 10_000 });
    expect(resume.compaction?.type).toBe("compaction");
    expect(texts(resume.entries)).toEqual(["x"]);
    expect(resume.budgetCut).toBeUndefined();
  });

  it("stops at the budget when it comes before the compaction", async () => {
    const tail = line(msg("new"));
    const path = await file("far.jsonl", headerLine, line(compaction("n")), line(msg("y".repeat(500))), tail);
    const resume = await readTranscriptForResume(path, { maxBytes: tail.length, hardCapBytes: tail.length });
    expect(resume.compaction).toBeUndefined();
    expect(texts(resume.entries)).toEqual(["new"]);
    expect(resume.budgetCut?.bytesLeftOut).toBeGreaterThan(500);
  });

  it("never splits a tool call from its results at the cut", async () => {
    const tail = [result("t1", "out 1"), result("t2", "out 2"), msg("done", "assistant"), msg("next")].map(
      line,
    );
    const path = await file("tools.jsonl", headerLine, line(msg("go")), line(call("t1")), ...tail);
    const budget = tail.join("").length;
    const resume = await readTranscriptForResume(path, { maxBytes: budget, hardCapBytes: budget });
    expect(texts(resume.entries)).toEqual(["done", "next"]);
    expect(resume.budgetCut?.toolResultsDropped).toBe(2);
    // With room for the call, the pair stays whole.
    const whole = await readTranscriptForResume(path, { maxBytes: 100_000 });
    expect(texts(whole.entries)).toEqual(["go", "<call>", "out 1", "out 2", "done", "next"]);
    expect(whole.budgetCut).toBeUndefined();
  });

  it("reads the newest entry even when it alone is over the budget, up to the hard cap", async () => {
    const big = line(msg("B".repeat(5000)));
    const path = await file("big.jsonl", headerLine, line(msg("older")), big);
    const resume = await readTranscriptForResume(path, { maxBytes: 1000, hardCapBytes: 10_000 });
    expect(texts(resume.entries)).toEqual(["B".repeat(5000)]);
    expect(resume.budgetCut).toBeDefined();
    const capped = await readTranscriptForResume(path, { maxBytes: 1000, hardCapBytes: 2000 });
    expect(capped.entries).toEqual([]);
    expect(capped.budgetCut?.bytesLeftOut).toBe((await stat(path)).size - headerLine.length);
    expect(capped.bytesRead).toBeLessThanOrEqual(4096 + 2001);
  });

  it("counts bad lines in the part read, not beyond the cut", async () => {
    const tail = ["not json\n", line(msg("kept"))];
    const path = await file("bad.jsonl", headerLine, "older garbage\n", line(msg("x")), ...tail);
    const budget = tail.join("").length;
    const resume = await readTranscriptForResume(path, { maxBytes: budget, hardCapBytes: budget });
    expect(texts(resume.entries)).toEqual(["kept"]);
    expect(resume.badLines).toEqual([
      { offset: expect.any(Number), reason: expect.stringMatching(/^not JSON/) },
    ]);
  });

  it("reads a bounded tail of a ~50 MB transcript without a compaction", async () => {
    const path = hugePath;
    const size = (await stat(path)).size;
    expect(size).toBeGreaterThan(50_000_000);
    const budget = resumeBudgetBytes(32_000);
    const resume = await readTranscriptForResume(path, { maxBytes: budget });
    expect(resume.bytesRead).toBeLessThanOrEqual(budget + 4096 + 1);
    expect(texts(resume.entries).at(-1)).toBe("the newest");
    expect(resume.entries.length).toBeLessThan(budget / 1000);
    expect(resume.budgetCut?.bytesLeftOut).toBeGreaterThan(size - budget - headerLine.length - 1);
    // Without options the hard cap bounds the read.
    const capped = await readTranscriptForResume(path);
    expect(capped.bytesRead).toBeLessThanOrEqual(RESUME_HARD_CAP_BYTES + 4096 + 1);
  });
});

/** The old `/api/history` selection: every good message entry but system ones, of the whole file, last `limit`. */
async function oldHistory(path: string, limit: number) {
  const read = await readTranscript(path);
  const messages = read.entries.filter(
    (e) => e.type === "message" && (e as MessageEntry).message.role !== "system",
  );
  return { entries: messages.slice(-limit), badLines: read.badLines.length };
}
const keep = (e: TranscriptEntry) => e.type === "message" && (e as MessageEntry).message.role !== "system";

describe("readTranscriptPage", () => {
  /** Small transcripts of every shape the old reader met. */
  const shapes: { name: string; lines: () => string[] }[] = [
    { name: "header and messages", lines: () => [headerLine, ...["a", "b", "c"].map((t) => line(msg(t)))] },
    {
      name: "every role, other types, compaction, blank and bad lines, a cut last line",
      lines: () => [
        headerLine,
        line(msg("sys", "system")),
        line(msg("u1")),
        "\n",
        line(call("t1")),
        line(result("t1", "r1")),
        "garbage\n",
        line(compaction("notes")),
        line({ type: "event", id: "ev", ts: TS }),
        line(msg("a1", "assistant")),
        '{"type":"message","id":"cut","mes',
      ],
    },
    { name: "lost header: line 1 is an entry", lines: () => [line(msg("first")), line(msg("second"))] },
    { name: "bad line 1", lines: () => ["not a header\n", line(msg("x")), line(msg("y"))] },
    { name: "header only", lines: () => [headerLine] },
    { name: "no final newline", lines: () => [headerLine, line(msg("p")), JSON.stringify(msg("q"))] },
  ];

  it.each(shapes)("gives what the old reader gave: $name", async ({ name, lines }) => {
    const path = await file(`page-${name.length}.jsonl`, ...lines());
    for (const limit of [1, 2, 3, 200]) {
      const page = await readTranscriptPage(path, { limit, keep });
      const old = await oldHistory(path, limit);
      expect(page.entries, `limit ${limit}`).toEqual(old.entries);
      if (page.before === undefined) expect(page.badLines.length).toBe(old.badLines);
      // Paging back with `before` until the start gives every message once, and every bad line once.
      const all = [...page.entries];
      let bad = page.badLines.length;
      let before = page.before;
      while (before !== undefined) {
        const older = await readTranscriptPage(path, { limit, keep, before });
        expect(older.beforeProblem).toBeUndefined();
        all.unshift(...older.entries);
        bad += older.badLines.length;
        before = older.before;
      }
      const whole = await oldHistory(path, Number.MAX_SAFE_INTEGER);
      expect(all).toEqual(whole.entries);
      expect(bad).toBe(whole.badLines);
    }
  });

  it("reads a bounded number of bytes from a ~50 MB transcript, whatever its size", async () => {
    const path = hugePath;
    const size = (await stat(path)).size;
    expect(size).toBeGreaterThan(50_000_000);
    const small = await readTranscriptPage(path, { limit: 5, keep });
    expect(texts(small.entries).at(-1)).toBe("the newest");
    expect(small.entries).toHaveLength(5);
    expect(small.bytesRead).toBeLessThan(4096 + 64 * 1024 + 1);
    // A page as large as asked for stops at maxBytes, and `before` continues from there.
    const wide = await readTranscriptPage(path, { limit: 2000, keep, maxBytes: 100_000 });
    expect(wide.bytesRead).toBeLessThanOrEqual(4096 + 100_001 + 1);
    expect(wide.entries.length).toBeGreaterThan(50);
    expect(wide.before).toBeGreaterThan(size - 100_001);
    const next = await readTranscriptPage(path, { limit: 1, keep, before: wide.before as number });
    expect(next.entries).toHaveLength(1);
  });

  it("passes over a line longer than maxBytes as one bad line, and pages on past it", async () => {
    const path = await file(
      "oversize.jsonl",
      headerLine,
      line(msg("before")),
      line(msg("H".repeat(20_000))),
      line(msg("after")),
    );
    const first = await readTranscriptPage(path, { limit: 10, keep, maxBytes: 1000 });
    expect(texts(first.entries)).toEqual(["after"]);
    const second = await readTranscriptPage(path, {
      limit: 10,
      keep,
      maxBytes: 1000,
      before: first.before as number,
    });
    expect(second.entries).toEqual([]);
    expect(second.badLines).toEqual([
      { offset: expect.any(Number), reason: "longer than 1000 bytes: not read" },
    ]);
    const third = await readTranscriptPage(path, {
      limit: 10,
      keep,
      maxBytes: 1000,
      before: second.before as number,
    });
    expect(texts(third.entries)).toEqual(["before"]);
    expect(third.before).toBeUndefined();
  });

  it("refuses a before that is not the start of a line, and a missing file is empty", async () => {
    const path = await file("cursor.jsonl", headerLine, line(msg("a")), line(msg("b")));
    const size = (await stat(path)).size;
    expect(
      (await readTranscriptPage(path, { limit: 1, keep, before: headerLine.length + 3 })).beforeProblem,
    ).toMatch(/is not the start of a line/);
    expect((await readTranscriptPage(path, { limit: 1, keep, before: size + 1 })).beforeProblem).toMatch(
      /from 0 to/,
    );
    expect((await readTranscriptPage(path, { limit: 1, keep, before: 0 })).entries).toEqual([]);
    expect(await readTranscriptPage(join(dir, "nope.jsonl"), { limit: 1, keep })).toEqual({
      exists: false,
      entries: [],
      badLines: [],
      bytesRead: 0,
    });
  });
});

describe("readTranscriptForResume: layout and an open descriptor", () => {
  it("reads through a given descriptor (left open) what it reads by path, and says where each entry lies", async () => {
    const lines = [
      headerLine,
      line(msg("one")),
      line(call("c1")),
      line(result("c1", "out")),
      line(msg("two")),
    ];
    const path = await file("layout.jsonl", ...lines);
    const byPath = await readTranscriptForResume(path, { layout: true });
    const handle = await open(path, "r");
    try {
      const through = await readTranscriptForResume(path, { layout: true, handle });
      expect(through).toEqual(byPath);
      // Still open: the caller's descriptor is not closed.
      expect((await handle.stat()).size).toBe(lines.join("").length);
    } finally {
      await handle.close();
    }
    const layout = byPath.layout!;
    expect(layout.floor).toBe(headerLine.length);
    expect(layout.unchanged).toBe(true);
    expect(layout.blankLines).toBe(0);
    let at = headerLine.length;
    for (const [i, place] of layout.lines.entries()) {
      expect(place.offset).toBe(at);
      expect(place.length).toBe(lines[i + 1]!.length - 1);
      at += lines[i + 1]!.length;
    }
    expect(layout.lines.map((l) => l.entry)).toEqual(byPath.entries);
  });
});

describe("the backward readers' descriptors", () => {
  it("read through a given raw descriptor leave it open; their own they close", async () => {
    const path = await file("raw-fd.jsonl", headerLine, line(msg("one")), line(msg("two")));
    const fd = openSync(path, "r");
    try {
      const through = await readTranscriptForResume(path, { handle: { fd } });
      expect(texts(through.entries)).toEqual(["one", "two"]);
      // Still open, and still this file.
      expect(fstatSync(fd).ino).toBe((await stat(path)).ino);
      expect(descriptorsOn(path)).toBe(1);
    } finally {
      closeSync(fd);
    }
    await readTranscriptForResume(path);
    await readTranscriptPage(path, { limit: 1, keep: () => true });
    await readTranscriptPage(path, { limit: 1, keep: () => true, before: 1 });
    expect(descriptorsOn(path)).toBe(0);
  });

  it("read a named pipe as an empty transcript at once, never waiting for a writer", () => {
    const pipe = join(dir, "pipe.jsonl");
    execFileSync("mkfifo", [pipe]);
    // In a child process: an open that waited for a writer would block the event loop for good, this test's own
    // timer with it. The child's time limit only ends such a wait (the opens take microseconds).
    const resumeReader = fileURLToPath(new URL("./transcript-resume.ts", import.meta.url));
    const pageReader = fileURLToPath(new URL("./transcript-page.ts", import.meta.url));
    const script = `
      import { readTranscriptForResume } from ${JSON.stringify(resumeReader)};
      import { readTranscriptPage } from ${JSON.stringify(pageReader)};
      const resume = await readTranscriptForResume(process.env.PIPE);
      const page = await readTranscriptPage(process.env.PIPE, { limit: 5, keep: () => true });
      process.stdout.write(JSON.stringify({ resume, page }));
    `;
    const out = execFileSync(process.execPath, ["--import", "tsx", "--input-type=module", "-e", script], {
      env: { ...process.env, PIPE: pipe },
      encoding: "utf8",
      timeout: 20_000,
    });
    const empty = { exists: true, entries: [], badLines: [], bytesRead: 0 };
    expect(JSON.parse(out)).toEqual({ resume: empty, page: empty });
  });
});
