/**
 * Transcript benchmarks (issue 12). Files are generated in a temp directory and deleted afterwards; figures are
 * with a warm page cache (the files were just written).
 * - Cost per message against the transcript's size, WITHOUT a compaction entry (what a session that never
 *   compacted has): the real `clawdis gateway`, one message to a session whose transcript is 1 MB, 100 MB or
 *   1 GB (hand-in → reply over `POST /api/agent`, the model server in another process). Each round messages a
 *   session the gateway has not seen (no warm tail: the resume reads from disk); the sessions of one size share
 *   one file (hard links), cut back to its size after each message so that every round meets the same file.
 * - The reader alone: resuming from a compaction entry costs the same on 1 GB as on 1 MB; against a full read.
 * - An append with and without fsync.
 */
import { link, mkdir, mkdtemp, open, rm, stat, statfs, truncate, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import {
  appendTranscript,
  makeHeader,
  newEntryId,
  readTranscript,
  readTranscriptForResume,
} from "../src/sessions/transcript.js";
import type { CompactionEntry, MessageEntry, SessionEntry } from "../src/sessions/types.js";
import {
  AgentClient,
  type GatewayProcess,
  gatewayConfig,
  modelArrival,
  ms,
  startGateway,
  startModelServer,
} from "./bench-processes.js";
import { type BenchRow, interleaved, median, percentile, timeMs } from "./bench-row.js";

const MiB = 1024 * 1024;
const GiB = 1024 * MiB;
const RUNS = 9;
const RESUME_RUNS = 51;
/** Rounds of the end-to-end rows (one message per size each). */
const ROUNDS = 5;

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

const fmtBytes = (n: number) =>
  n >= GiB
    ? `${(n / GiB).toFixed(2)} GiB`
    : n >= MiB
      ? `${(n / MiB).toFixed(1)} MiB`
      : `${(n / 1024).toFixed(0)} KiB`;

/** How large the "1 GB" files are: 1 GiB, or less when the temp folder has too little room (said in the notes). */
async function largeSize(dir: string): Promise<{ repeat: number; note: string }> {
  const fs = await statfs(dir);
  const free = fs.bavail * fs.bsize;
  if (free >= 4 * GiB) return { repeat: 1024, note: "" };
  const repeat = Math.max(16, Math.min(256, Math.floor(free / 6 / MiB)));
  return {
    repeat,
    note: `; only ${fmtBytes(free)} free, so the large file is ${repeat} MiB instead of 1 GiB`,
  };
}

/** The reader alone: resume from a compaction entry on 1 GB against 1 MB; a full read; an append. */
async function benchReader(dir: string, repeat: number, sizeNote: string): Promise<BenchRow[]> {
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
      throw new Error(`resume of ${path} returned ${resume.entries.length} entries, expected ${tail.count}`);
    }
  }
  // Interleaved, so that both files see the same machine state.
  let largeBytesRead = 0;
  const resumes = await interleaved(
    RESUME_RUNS,
    () =>
      timeMs(async () => {
        largeBytesRead = (await readTranscriptForResume(large)).bytesRead;
      }),
    () => timeMs(() => readTranscriptForResume(small)),
  );
  const full = await interleaved(
    RUNS,
    () => timeMs(() => readTranscriptForResume(small)),
    () => timeMs(() => readTranscript(small)),
  );

  // Appending one message line to the large file, with and without fsync (accepted input is synced).
  const header = makeHeader("bench", "main", new Date());
  let n = body.count + tail.count;
  const entry = () => JSON.parse(messageLine(n++)) as MessageEntry;
  const appends = await interleaved(
    RUNS,
    () => timeMs(() => appendTranscript(large, [entry()], { header, fsync: true })),
    () => timeMs(() => appendTranscript(large, [entry()], { header })),
  );
  await rm(large, { force: true });
  return [
    {
      name: `transcript resume from a compaction, ${fmtBytes(largeSize)} file`,
      unit: "ms",
      ours: resumes.ours,
      baselineName: `same, ${fmtBytes(smallSize)} file`,
      baseline: resumes.baseline,
      target: { kind: "ratio", max: 2 },
      note: `compaction ${fmtBytes(tail.buffer.length)} from the end, ${tail.count} entries after it; read ${fmtBytes(largeBytesRead)}${sizeNote}`,
    },
    {
      name: `transcript resume, ${fmtBytes(smallSize)} file`,
      unit: "ms",
      ours: full.ours,
      baselineName: "full readTranscript, same file",
      baseline: full.baseline,
      note: `full read parses all ${body.count + tail.count + 1} entries`,
    },
    {
      name: "appendTranscript 1 message + fsync",
      unit: "ms",
      ours: appends.ours,
      baselineName: "append without fsync",
      baseline: appends.baseline,
      note: `onto the ${fmtBytes(largeSize)} file; p90 ${percentile(appends.ours, 90).toFixed(2)} ms`,
    },
  ];
}

/** A transcript of about `bytes` of message lines after its header, and no compaction entry. */
async function writePlainTranscript(
  path: string,
  body: Buffer,
  repeat: number,
  rest: Buffer,
): Promise<number> {
  const handle = await open(path, "w", 0o600);
  try {
    await handle.write(`${JSON.stringify(makeHeader("bench", "group:bench", new Date()))}\n`);
    for (let i = 0; i < repeat; i++) await handle.write(body);
    await handle.write(rest);
    return (await handle.stat()).size;
  } finally {
    await handle.close();
  }
}

/** Cost per message against the transcript's size, no compaction entry: the real gateway, hand-in → reply. */
async function benchMessageCost(dir: string, repeat: number, sizeNote: string): Promise<BenchRow[]> {
  const stateDir = join(dir, "state");
  const sessionsDir = join(stateDir, "sessions");
  await mkdir(sessionsDir, { recursive: true, mode: 0o700 });
  const body = linesOf(MiB, 0);
  const sizes = [
    { label: "1mb", repeat: 0, rest: linesOf(1_000_000 - 200, 0).buffer },
    { label: "100mb", repeat: 100, rest: Buffer.alloc(0) },
    { label: "1gb", repeat, rest: Buffer.alloc(0) },
  ];
  const rounds = ROUNDS + 1; // the first is a warm-up
  const now = Date.now();
  const map: Record<string, SessionEntry> = {};
  const files: { label: string; path: string; size: number }[] = [];
  for (const size of sizes) {
    const path = join(sessionsDir, `t-${size.label}-0.jsonl`);
    const bytes = await writePlainTranscript(path, body.buffer, size.repeat, size.rest);
    files.push({ label: size.label, path, size: bytes });
    for (let r = 0; r < rounds; r++) {
      const sessionId = `t-${size.label}-${r}`;
      if (r > 0) await link(path, join(sessionsDir, `${sessionId}.jsonl`));
      map[`group:${size.label}-${r}`] = { sessionId, updatedAt: now, lastInteractionAt: now, createdAt: now };
    }
  }
  await writeFile(join(sessionsDir, "sessions.json"), `${JSON.stringify(map, null, 2)}\n`, { mode: 0o600 });
  const model = await startModelServer();
  let gateway: GatewayProcess | undefined;
  try {
    gateway = await startGateway(stateDir, gatewayConfig(model.url));
    const client = new AgentClient(gateway.url, gateway.token);
    const reply: Record<string, number[]> = { "1mb": [], "100mb": [], "1gb": [] };
    const toModel: Record<string, number[]> = { "1mb": [], "100mb": [], "1gb": [] };
    /** Bytes each message appended: a compaction entry shows as tens of KB, a plain exchange as well under 1. */
    const appended: Record<string, number[]> = { "1mb": [], "100mb": [], "1gb": [] };
    for (let r = 0; r < rounds; r++) {
      for (const file of files) {
        const answer = await client.post(`round ${r}: what did we decide?`, `group:${file.label}-${r}`);
        const at = modelArrival(answer);
        const grown = (await stat(file.path)).size - file.size;
        // Back to the size it had: the next round meets the same file, without this round's compaction.
        await truncate(file.path, file.size);
        if (r === 0) continue;
        reply[file.label]!.push(ms(answer.sentAt, answer.doneAt));
        toModel[file.label]!.push(ms(answer.sentAt, at));
        appended[file.label]!.push(grown);
      }
    }
    client.close();
    const sizeOf = (label: string) => fmtBytes(files.find((f) => f.label === label)!.size);
    const row = (label: string): BenchRow => ({
      name: `cost per message, ${sizeOf(label)} transcript without compaction`,
      unit: "ms",
      ours: reply[label]!,
      baselineName: `same, ${sizeOf("1mb")} transcript`,
      baseline: reply["1mb"]!,
      target: { kind: "ratio", max: 2 },
      note: `hand-in → reply, first message of a session (read from disk); to the last model request ${median(toModel[label]!).toFixed(1)} vs ${median(toModel["1mb"]!).toFixed(1)} ms; appended ${fmtBytes(median(appended[label]!))} vs ${fmtBytes(median(appended["1mb"]!))}${label === "1gb" ? sizeNote : ""}`,
    });
    return [row("100mb"), row("1gb")];
  } finally {
    await gateway?.stop();
    await model.stop();
  }
}

export async function benchTranscript(): Promise<BenchRow[]> {
  const dir = await mkdtemp(join(tmpdir(), "clawdis-transcript-bench-"));
  try {
    const { repeat, note } = await largeSize(dir);
    const rows = await benchMessageCost(dir, repeat, note);
    await rm(join(dir, "state"), { recursive: true, force: true });
    rows.push(...(await benchReader(dir, repeat, note)));
    return rows;
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}
