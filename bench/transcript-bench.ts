/**
 * Transcript benchmark: resuming a session must cost the same on a 1 GB transcript as on a 1 MB one, because
 * `readTranscriptForResume` reads backwards only to the newest compaction entry. Files are generated in a temp
 * directory and deleted afterwards. Figures are with a warm page cache (the files were just written).
 */
import { mkdtemp, open, rm, statfs } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import {
  appendTranscript,
  makeHeader,
  newEntryId,
  readTranscript,
  readTranscriptForResume,
} from "../src/sessions/transcript.js";
import type { CompactionEntry, MessageEntry } from "../src/sessions/types.js";
import { type BenchRow, median, percentile, timeMs } from "./bench-row.js";

const MiB = 1024 * 1024;
const GiB = 1024 * MiB;
const RUNS = 9;
const RESUME_RUNS = 51;

const WORDS =
  "the agent read the file and answered with a short summary of what changed since yesterday".split(" ");

function prose(length: number, seed: number): string {
  const out: string[] = [];
  let n = 0;
  for (let i = seed; n < length; i++) {
    const word = WORDS[(i * 7) % WORDS.length]!;
    out.push(word);
    n += word.length + 1;
  }
  return out.join(" ");
}

/** One realistic message line: a person's message, a reply, a tool call or a tool result, with meta. */
function messageLine(i: number): string {
  const ts = new Date(Date.UTC(2026, 0, 1) + i * 1000).toISOString();
  const meta = { channel: "telegram", chatId: "123456789", senderId: "123456789", messageId: String(i) };
  let entry: MessageEntry;
  switch (i % 4) {
    case 0:
      entry = {
        type: "message",
        id: newEntryId(),
        ts,
        message: { role: "user", content: prose(120 + (i % 300), i) },
        meta,
      };
      break;
    case 1:
      entry = {
        type: "message",
        id: newEntryId(),
        ts,
        message: {
          role: "assistant",
          content: null,
          tool_calls: [
            {
              id: `call_${i}`,
              type: "function",
              function: { name: "read_file", arguments: '{"path":"notes.md"}' },
            },
          ],
        },
        meta: {
          ...meta,
          model: "gpt-4.1-mini",
          usage: { promptTokens: 12_000 + i, completionTokens: 40, totalTokens: 12_040 + i },
        },
      };
      break;
    case 2:
      entry = {
        type: "message",
        id: newEntryId(),
        ts,
        message: { role: "tool", tool_call_id: `call_${i - 1}`, content: prose(1500 + (i % 2500), i) },
      };
      break;
    default:
      entry = {
        type: "message",
        id: newEntryId(),
        ts,
        message: { role: "assistant", content: prose(300 + (i % 900), i) },
        meta: {
          ...meta,
          model: "gpt-4.1-mini",
          usage: { promptTokens: 13_000 + i, completionTokens: 200, totalTokens: 13_200 + i },
        },
      };
  }
  return `${JSON.stringify(entry)}\n`;
}

/** Complete lines adding up to at least `bytes`; returns the buffer and how many lines it holds. */
function linesOf(bytes: number, from: number): { buffer: Buffer; count: number } {
  const parts: string[] = [];
  let size = 0;
  let i = from;
  while (size < bytes) {
    const line = messageLine(i++);
    parts.push(line);
    size += Buffer.byteLength(line);
  }
  return { buffer: Buffer.from(parts.join("")), count: i - from };
}

/** header + `repeat` × body (history) + one compaction entry + tail (~50 KB of messages after it). */
async function writeTranscriptFile(
  path: string,
  body: Buffer,
  repeat: number,
  tail: Buffer,
): Promise<number> {
  const header = `${JSON.stringify(makeHeader("bench", "main", new Date()))}\n`;
  const compaction: CompactionEntry = {
    type: "compaction",
    id: newEntryId(),
    ts: new Date().toISOString(),
    notes: prose(2000, 3),
    kept: [
      { role: "user", content: prose(200, 5) },
      { role: "assistant", content: prose(400, 6) },
    ],
    replacedEntries: 1000 * repeat,
    tokensBefore: 96_000,
  };
  const handle = await open(path, "w");
  try {
    await handle.write(header);
    for (let i = 0; i < repeat; i++) await handle.write(body);
    await handle.write(`${JSON.stringify(compaction)}\n`);
    await handle.write(tail);
    return (await handle.stat()).size;
  } finally {
    await handle.close();
  }
}

async function timeRuns(fn: () => Promise<unknown>): Promise<number[]> {
  await fn(); // warm-up
  const runs: number[] = [];
  for (let i = 0; i < RUNS; i++) runs.push(await timeMs(fn));
  return runs;
}

const fmtBytes = (n: number) =>
  n >= GiB
    ? `${(n / GiB).toFixed(2)} GiB`
    : n >= MiB
      ? `${(n / MiB).toFixed(1)} MiB`
      : `${(n / 1024).toFixed(0)} KiB`;

export async function benchTranscript(): Promise<BenchRow[]> {
  const dir = await mkdtemp(join(tmpdir(), "clawdis-transcript-bench-"));
  try {
    const fs = await statfs(dir);
    const free = fs.bavail * fs.bsize;
    let repeat = 1024;
    let sizeNote = "";
    if (free < 3 * GiB) {
      repeat = Math.max(16, Math.min(256, Math.floor(free / 4 / MiB)));
      sizeNote = `; only ${fmtBytes(free)} free, so the large file is ${repeat} MiB instead of 1 GiB`;
    }
    const body = linesOf(MiB, 0);
    const tail = linesOf(50 * 1024, body.count);
    const small = join(dir, "small.jsonl");
    const large = join(dir, "large.jsonl");
    const smallSize = await writeTranscriptFile(small, body.buffer, 1, tail.buffer);
    const largeSize = await writeTranscriptFile(large, body.buffer, repeat, tail.buffer);

    // The benchmark measures the right thing only if resume returns exactly the tail.
    for (const path of [small, large]) {
      const resume = await readTranscriptForResume(path);
      if (resume.entries.length !== tail.count || !resume.compaction || resume.badLines.length > 0) {
        throw new Error(
          `resume of ${path} returned ${resume.entries.length} entries, expected ${tail.count}`,
        );
      }
    }
    // Interleaved, so that both files see the same machine state.
    let largeBytesRead = 0;
    const largeRuns: number[] = [];
    const smallRuns: number[] = [];
    await readTranscriptForResume(large);
    await readTranscriptForResume(small);
    for (let i = 0; i < RESUME_RUNS; i++) {
      largeRuns.push(
        await timeMs(async () => {
          largeBytesRead = (await readTranscriptForResume(large)).bytesRead;
        }),
      );
      smallRuns.push(await timeMs(() => readTranscriptForResume(small)));
    }
    const fullRuns = await timeRuns(() => readTranscript(small));

    // Appending one message line to the large file, with and without fsync (accepted input is synced).
    const header = makeHeader("bench", "main", new Date());
    let n = body.count + tail.count;
    const entry = () => JSON.parse(messageLine(n++)) as MessageEntry;
    const syncRuns = await timeRuns(() => appendTranscript(large, [entry()], { header, fsync: true }));
    const plainRuns = await timeRuns(() => appendTranscript(large, [entry()], { header }));

    return [
      {
        name: `transcript resume, ${fmtBytes(largeSize)} file`,
        ours: median(largeRuns),
        baselineName: `resume, ${fmtBytes(smallSize)} file`,
        baseline: median(smallRuns),
        unit: "ms",
        note: `compaction ${fmtBytes(tail.buffer.length)} from the end, ${tail.count} entries after it; read ${fmtBytes(largeBytesRead)}; p90 ${percentile(largeRuns, 90).toFixed(2)} ms${sizeNote}`,
      },
      {
        name: `transcript resume, ${fmtBytes(smallSize)} file`,
        ours: median(smallRuns),
        baselineName: "full readTranscript, same file",
        baseline: median(fullRuns),
        unit: "ms",
        note: `full read parses all ${body.count + tail.count + 1} entries`,
      },
      {
        name: "appendTranscript 1 message + fsync",
        ours: median(syncRuns),
        baselineName: "append without fsync",
        baseline: median(plainRuns),
        unit: "ms",
        note: `onto the ${fmtBytes(largeSize)} file; p90 ${percentile(syncRuns, 90).toFixed(2)} ms`,
      },
    ];
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}
