import { describe, expect, it } from "vitest";
import { NOT_RUN_DRAINED } from "../agent/run-turn.js";
import type { StoredChatMessage, TranscriptEntry } from "../sessions/types.js";
import { type DrainDecision, type DrainedTurn, decideDrainedTurn, drainNotice } from "./drain-resume.js";

let n = 0;
const entry = (message: StoredChatMessage): TranscriptEntry =>
  ({ type: "message", id: `e${++n}`, ts: "2026-01-01T00:00:00.000Z", message }) as TranscriptEntry;
const asks = (ids: string[], content: string | null = null) =>
  entry({
    role: "assistant",
    content,
    tool_calls: ids.map((id) => ({ id, type: "function", function: { name: "bash", arguments: "{}" } })),
  });
const result = (id: string, content = "ok") => entry({ role: "tool", tool_call_id: id, content });
const guardState = { type: "loop-guard", id: "g1", ts: "2026-01-01T00:00:00.000Z" } as TranscriptEntry;

const turn = (entries: TranscriptEntry[], extra: Partial<DrainedTurn> = {}): DrainedTurn => ({
  entries,
  textStreamed: false,
  othersWaiting: 0,
  ...extra,
});

describe("decideDrainedTurn: does a drained turn go on by itself after the restart", () => {
  const rows: [string, DrainedTurn, DrainDecision][] = [
    [
      "one batch done, nothing shown, nothing waiting",
      turn([asks(["a"]), result("a"), guardState]),
      { action: "resume", why: "after a tool batch" },
    ],
    [
      "two batches done",
      turn([asks(["a", "b"]), result("a"), result("b"), asks(["c"]), result("c")]),
      { action: "resume", why: "after a tool batch" },
    ],
    [
      "nothing done yet (the first model call was cancelled)",
      turn([]),
      { action: "resume", why: "nothing done yet" },
    ],
    [
      "nothing done yet, others waiting: answered after the restart like them",
      turn([], { othersWaiting: 2 }),
      { action: "resume", why: "nothing done yet" },
    ],
    [
      "text reached the person: streamed",
      turn([asks(["a"]), result("a")], { textStreamed: true }),
      { action: "tell", why: "text reached the person" },
    ],
    [
      "text reached the person: in a stored response with tool calls",
      turn([asks(["a"], "Let me look."), result("a")]),
      { action: "tell", why: "text reached the person" },
    ],
    [
      "text reached the person: streamed by a call that was not stored",
      turn([], { textStreamed: true }),
      { action: "tell", why: "text reached the person" },
    ],
    [
      "another message waits for the session",
      turn([asks(["a"]), result("a")], { othersWaiting: 1 }),
      { action: "tell", why: "others wait" },
    ],
    [
      "a tool call has no result",
      turn([asks(["a", "b"]), result("a")]),
      { action: "tell", why: "a tool call has no result" },
    ],
    [
      "a later batch lost a result",
      turn([asks(["a"]), result("a"), asks(["b"])]),
      { action: "tell", why: "a tool call has no result" },
    ],
    [
      "first batch not done: its calls were recorded as not run",
      turn([asks(["a"]), result("a", NOT_RUN_DRAINED)]),
      { action: "tell", why: "first batch not done" },
    ],
    [
      "a later batch not run, the first done",
      turn([asks(["a"]), result("a"), asks(["b"]), result("b", NOT_RUN_DRAINED)]),
      { action: "resume", why: "after a tool batch" },
    ],
    [
      "whitespace is not text",
      turn([asks(["a"], "  \n"), result("a")]),
      { action: "resume", why: "after a tool batch" },
    ],
  ];
  it.each(rows)("%s", (_name, input, expected) => {
    expect(decideDrainedTurn(input)).toEqual(expected);
  });
});

describe("drainNotice", () => {
  it("says stopping or restarting in one line, and whether the message will be answered", () => {
    const resume: DrainDecision = { action: "resume", why: "after a tool batch" };
    const tell: DrainDecision = { action: "tell", why: "others wait" };
    expect(drainNotice("stopping", resume)).toBe(
      "The gateway is stopping; your message will be answered after it restarts.",
    );
    expect(drainNotice("restarting", resume)).toBe(
      "The gateway is restarting; your message will be answered in a moment.",
    );
    expect(drainNotice("stopping", tell)).toMatch(
      /^The gateway is stopping, so I stopped partway .*more messages/,
    );
    expect(drainNotice("restarting", tell)).toMatch(
      /^The gateway is restarting, .*send it again to go on\.$/,
    );
    for (const text of [drainNotice("stopping", tell), drainNotice("restarting", resume)])
      expect(text).not.toContain("\n");
  });
});
