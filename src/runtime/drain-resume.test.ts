import { describe, expect, it } from "vitest";
import { NOT_RUN_DRAINED } from "../agent/run-turn.js";
import type { MessageEntry, StoredChatMessage, TranscriptEntry } from "../sessions/types.js";
import {
  CUT_SHORT_STOPPED,
  type DrainDecision,
  type DrainedTurn,
  decideDrainedTurn,
  drainNotice,
  NOT_RUN_STOPPED,
} from "./drain-resume.js";

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
  // By default every call with a result other than "not run" began.
  callsStarted: entries
    .filter((e): e is MessageEntry => e.type === "message")
    .filter((e) => e.message.role === "tool" && e.message.content !== NOT_RUN_DRAINED)
    .map((e) => e.message.tool_call_id ?? ""),
  othersWaiting: 0,
  ...extra,
});
const resume = (why: DrainDecision["why"], results: DrainDecision["results"] = []): DrainDecision => ({
  action: "resume",
  why,
  results,
});

describe("decideDrainedTurn: every drained turn goes on by itself after the restart", () => {
  const rows: [string, DrainedTurn, DrainDecision][] = [
    [
      "one batch done, nothing shown, nothing waiting",
      turn([asks(["a"]), result("a"), guardState]),
      resume("after a tool batch"),
    ],
    [
      "two batches done",
      turn([asks(["a", "b"]), result("a"), result("b"), asks(["c"]), result("c")]),
      resume("after a tool batch"),
    ],
    ["nothing done yet (the first model call was cancelled)", turn([]), resume("nothing done yet")],
    ["nothing done yet, others waiting", turn([], { othersWaiting: 2 }), resume("nothing done yet")],
    [
      "another message waits for the session: resumes, answered before it by the replay's order",
      turn([asks(["a"]), result("a")], { othersWaiting: 1 }),
      resume("after a tool batch"),
    ],
    [
      "text reached the person: streamed",
      turn([asks(["a"]), result("a")], { textStreamed: true }),
      resume("after text was shown"),
    ],
    [
      "text reached the person: in a stored response with tool calls",
      turn([asks(["a"], "Let me look."), result("a")]),
      resume("after text was shown"),
    ],
    [
      "text reached the person: streamed by a call that was not stored",
      turn([], { textStreamed: true }),
      resume("after text was shown"),
    ],
    [
      "a batch cut short: the call that began is cut short, the one that never began is not run",
      turn([asks(["a", "b", "c"]), result("a")], { callsStarted: ["a", "b"] }),
      resume("after a tool batch", [
        { callId: "b", name: "bash", content: CUT_SHORT_STOPPED },
        { callId: "c", name: "bash", content: NOT_RUN_STOPPED },
      ]),
    ],
    [
      "a later batch lost a result",
      turn([asks(["a"]), result("a"), asks(["b"])]),
      resume("after a tool batch", [{ callId: "b", name: "bash", content: NOT_RUN_STOPPED }]),
    ],
    [
      "a first batch with no call begun",
      turn([asks(["a"])], { callsStarted: [] }),
      resume("before its first batch", [{ callId: "a", name: "bash", content: NOT_RUN_STOPPED }]),
    ],
    [
      "first batch not done: its calls were recorded as not run",
      turn([asks(["a"]), result("a", NOT_RUN_DRAINED)]),
      resume("before its first batch"),
    ],
    [
      "a later batch not run, the first done",
      turn([asks(["a"]), result("a"), asks(["b"]), result("b", NOT_RUN_DRAINED)]),
      resume("after a tool batch"),
    ],
    ["whitespace is not text", turn([asks(["a"], "  \n"), result("a")]), resume("after a tool batch")],
  ];
  it.each(rows)("%s", (_name, input, expected) => {
    expect(decideDrainedTurn(input)).toEqual(expected);
  });
});

describe("drainNotice", () => {
  it("says stopping or restarting in one line, that the message will be answered, and never asks to resend", () => {
    const batch = resume("after a tool batch");
    const shown = resume("after text was shown");
    expect(drainNotice("stopping", batch)).toBe(
      "The gateway is stopping; your message will be answered after it restarts.",
    );
    expect(drainNotice("restarting", batch)).toBe(
      "The gateway is restarting; your message will be answered in a moment.",
    );
    expect(drainNotice("stopping", shown)).toBe(
      "The gateway is stopping; I will finish this answer after it restarts.",
    );
    expect(drainNotice("restarting", shown)).toBe(
      "The gateway is restarting; I will finish this answer in a moment.",
    );
    const whys: DrainDecision["why"][] = [
      "nothing done yet",
      "after a tool batch",
      "before its first batch",
      "after text was shown",
    ];
    for (const mode of ["stopping", "restarting"] as const)
      for (const why of whys) {
        const text = drainNotice(mode, { why });
        expect(text).not.toContain("\n");
        expect(text).not.toMatch(/send it again|again/i);
      }
  });
});
