import { describe, expect, it } from "vitest";
import type { StoredChatMessage, StoredToolCall, TranscriptEntry } from "../../sessions/types.js";
import { parkedState } from "../choose-session.js";
import { openParked } from "./parked-batch.js";

const call = (id: string): StoredToolCall => ({
  id,
  type: "function",
  function: { name: "bash", arguments: "{}" },
});
let n = 0;
const message = (m: StoredChatMessage, meta: Record<string, unknown> = {}): TranscriptEntry => ({
  type: "message",
  id: `e${++n}`,
  ts: "2026-01-01T00:00:00.000Z",
  message: m,
  meta,
});
const user = message({ role: "user", content: "do it" }, { journalId: "j1" });
const asked = message({ role: "assistant", content: null, tool_calls: [call("c1"), call("c2"), call("c3")] });
const result = (id: string) => message({ role: "tool", tool_call_id: id, content: "ok" });
const parked: TranscriptEntry = {
  type: "tool-parked",
  id: "p1",
  ts: "2026-01-01T00:00:00.000Z",
  callIds: ["c2", "c3"],
  reason: "ask",
  journalId: "j1",
};
const finalAnswer = message({ role: "assistant", content: "done" }, { final: true, journalId: "j2" });

describe("a parked batch, as the transcript holds it", () => {
  it.each<[string, TranscriptEntry[], string[] | undefined, ReturnType<typeof parkedState>]>([
    ["no park", [user, asked, result("c1"), result("c2"), result("c3")], undefined, undefined],
    [
      "parked: the asked call and the one after wait",
      [user, asked, result("c1"), parked],
      ["c2", "c3"],
      "waiting",
    ],
    [
      "an answer ran one of them (then stopped): the other still waits, the record is handed on",
      [user, asked, result("c1"), parked, result("c2")],
      ["c3"],
      "handed-on",
    ],
    [
      "an answer ran both, the model not yet called: nothing waits, the batch is still open",
      [user, asked, result("c1"), parked, result("c2"), result("c3")],
      [],
      "handed-on",
    ],
    [
      "the answer's reply follows: resolved",
      [user, asked, result("c1"), parked, result("c2"), result("c3"), finalAnswer],
      undefined,
      "handed-on",
    ],
  ])("%s", (_name, entries, waiting, state) => {
    expect(openParked(entries)?.waiting.map((c) => c.id)).toEqual(waiting);
    expect(parkedState(entries, "j1")).toBe(state);
    expect(parkedState(entries, "j-other")).toBeUndefined();
  });

  it("names the record that waits and why", () => {
    expect(openParked([user, asked, result("c1"), parked])).toMatchObject({ journalId: "j1", reason: "ask" });
  });
});
