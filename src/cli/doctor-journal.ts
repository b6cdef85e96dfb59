import { stat } from "node:fs/promises";
import { join } from "node:path";
import { describeError } from "../core/errors.js";
import { type Env, journalDir, stateDir } from "../core/paths.js";
import { describeHolder } from "../runtime/own-state-dir.js";
import { stateOwnerOf } from "../runtime/state-lock.js";
import { type JournalRecord, MAX_OPEN_BYTES } from "../sessions/journal-state.js";
import { readRecords } from "../sessions/read-records.js";

/** A journal this large is worth a look: the gateway compacts it at start and as it grows. */
export const LARGE_JOURNAL_BYTES = 256 * 1024 * 1024;

export interface DoctorReport {
  ok(text: string): void;
  note(text: string): void;
  problem(text: string): void;
}

/**
 * The state directory's owner and the inbound journal: its size, the messages it holds that are not answered
 * yet, and lines that do not parse. Read streaming (any size); never changes the file (the gateway owns it).
 */
export async function checkJournal(env: Env, report: DoctorReport): Promise<void> {
  const owner = await stateOwnerOf(stateDir(env)).catch(() => undefined);
  if (owner) report.note(`${describeHolder(owner)} owns the state directory ${stateDir(env)}`);
  const path = join(journalDir(env), "inbound.jsonl");
  const info = await stat(path).catch(() => undefined);
  if (!info) {
    report.ok(`journal ${path} does not exist yet`);
    return;
  }
  const open = new Map<string, number>();
  let read: { bad: number; records: number };
  try {
    read = await readRecords(path, (record: JournalRecord, bytes) => {
      if (record.op === "accept") open.set(record.jid, bytes);
      else if (record.op === "end") open.delete(record.jid);
      // A reply to the local API ends its records in the reply record itself (no `end` follows).
      else if (record.op === "reply") for (const end of record.ends ?? []) open.delete(end.jid);
    });
  } catch (error) {
    report.problem(`journal ${path} cannot be read: ${describeError(error)}`);
    return;
  }
  const openBytes = [...open.values()].reduce((a, b) => a + b, 0);
  const size = `${(info.size / 1024 / 1024).toFixed(1)} MB`;
  const pending = open.size === 1 ? "1 message" : `${open.size} messages`;
  if (info.size > LARGE_JOURNAL_BYTES) {
    report.problem(
      `journal ${path} is ${size}: start the gateway (it compacts the journal at start), or look for a client flooding the webhooks`,
    );
  } else {
    report.ok(`journal ${path}: ${size}, ${pending} not answered yet`);
  }
  if (openBytes > MAX_OPEN_BYTES) {
    report.problem(
      `the journal holds ${pending} not answered yet (${openBytes} bytes): new messages are refused until they are`,
    );
  }
  if (read.bad > 0) {
    report.note(
      `journal: ${read.bad === 1 ? "1 line does" : `${read.bad} lines do`} not parse (a torn last write is normal after a crash; they are skipped)`,
    );
  }
}
