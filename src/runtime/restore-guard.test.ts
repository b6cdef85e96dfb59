import { describe, expect, it } from "vitest";
import { newLoopGuard } from "../agent/loop-guard.js";
import type { CompactionEntry, TranscriptEntry } from "../sessions/types.js";
import { restoreGuard } from "./restore-guard.js";

const ts = "2026-01-01T00:00:00.000Z";
const state = (refused: number) => ({ ...newLoopGuard(), refused });
const guardEntry = (journalId: string, refused: number): TranscriptEntry => ({
  type: "loop-guard",
  id: `g${refused}`,
  ts,
  turnId: "t",
  journalId,
  state: state(refused),
});
const compaction = (journalId: string, refused: number) =>
  ({ type: "compaction", id: "c", ts, notes: "", journalId, loopGuard: state(refused) }) as CompactionEntry;

describe("restoreGuard", () => {
  it.each([
    ["the newest entry of that turn", undefined, [guardEntry("j1", 1), guardEntry("j1", 3)], "j1", 3],
    ["another message's entry is not used", undefined, [guardEntry("j2", 2)], "j1", undefined],
    ["after a compaction with no entry since: the state it saved", compaction("j1", 4), [], "j1", 4],
    ["an entry after the compaction wins", compaction("j1", 4), [guardEntry("j1", 5)], "j1", 5],
    ["a compaction of another turn gives nothing", compaction("j0", 4), [], "j1", undefined],
  ] as [string, CompactionEntry | undefined, TranscriptEntry[], string, number | undefined][])(
    "%s",
    (_name, c, entries, jid, refused) => {
      expect(restoreGuard(c, entries, jid)?.refused).toBe(refused);
    },
  );
});
