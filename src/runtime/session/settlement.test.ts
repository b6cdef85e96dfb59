import { describe, expect, it } from "vitest";
import type { TurnResult } from "../../agent/run-turn.js";
import type { StoredChatMessage, TranscriptEntry } from "../../sessions/types.js";
import { NOT_RUN_INTERRUPTED } from "../authority/authority.js";
import { CUT_SHORT_STOPPED } from "../drain-resume.js";
import { formatTurnNotice } from "../turn-notice.js";
import { decideSettlement, type Settlement, settlementForError, type TurnFacts } from "./settlement.js";
import { NotTaken } from "./taken.js";

const result = (extra: Partial<TurnResult>): TurnResult => ({
  stopReason: "end",
  text: "",
  model: "m",
  contextTokens: 10,
  contextEstimated: false,
  rounds: 1,
  compactions: 0,
  guard: {} as TurnResult["guard"],
  ...extra,
});
const facts = (extra: Partial<TurnFacts> = {}): TurnFacts => ({
  aborted: false,
  abortReason: undefined,
  drainMode: undefined,
  trace: { entries: [], textStreamed: false, callsStarted: [] },
  othersWaiting: 0,
  ...extra,
});
const entry = (message: StoredChatMessage): TranscriptEntry =>
  ({ type: "message", id: "e1", ts: "2026-01-01T00:00:00.000Z", message }) as TranscriptEntry;
const askedBash = entry({
  role: "assistant",
  content: null,
  tool_calls: [{ id: "c1", type: "function", function: { name: "bash", arguments: "{}" } }],
});

/** The settlement's kind and the fields a row checks (a drained one: mode, why, text, results). */
function summary(s: Settlement): Record<string, unknown> {
  switch (s.kind) {
    case "reply":
    case "quiet-reply":
      return { kind: s.kind, text: s.text };
    case "drained-resume":
    case "drained-tell":
      return {
        kind: s.kind,
        mode: s.mode,
        why: s.decision.why,
        text: s.text,
        results: s.decision.results.length,
      };
    case "failed":
      return { kind: s.kind, text: s.text };
    case "interrupted":
      return { kind: s.kind, by: s.by, source: s.source, results: s.results.map((r) => r.content) };
    case "parked":
      return { kind: s.kind, open: s.open };
    case "retry":
      return { kind: s.kind, attempt: s.attempt, delayMs: s.delayMs, why: s.why };
    case "error":
      return { kind: s.kind, why: s.why, text: s.text };
    default:
      return { kind: s.kind };
  }
}

describe("decideSettlement", () => {
  const rows: [string, TurnResult, TurnFacts, Record<string, unknown>][] = [
    [
      "a turn that ended replies with its text",
      result({ text: "hi" }),
      facts(),
      { kind: "reply", text: "hi" },
    ],
    [
      "a quiet stop with text gives it as the reply",
      result({ stopReason: "tool-loop", quiet: true, text: "stuck" }),
      facts(),
      { kind: "quiet-reply", text: "stuck" },
    ],
    [
      "a quiet stop without text fails with a notice",
      result({ stopReason: "tool-loop", quiet: true, text: "" }),
      facts(),
      { kind: "failed", text: formatTurnNotice("tool-loop") },
    ],
    [
      "drained at a safe point with nothing done: resumes, told the message will be answered",
      result({ stopReason: "aborted", drained: true }),
      facts({ drainMode: "restarting" }),
      {
        kind: "drained-resume",
        mode: "restarting",
        why: "nothing done yet",
        text: "The gateway is restarting; your message will be answered in a moment.",
        results: 0,
      },
    ],
    [
      "drained without a drain mode counts as stopping",
      result({ stopReason: "aborted", drained: true }),
      facts(),
      {
        kind: "drained-resume",
        mode: "stopping",
        why: "nothing done yet",
        text: "The gateway is stopping; your message will be answered after it restarts.",
        results: 0,
      },
    ],
    [
      "drained after text was shown: told the answer will be finished",
      result({ stopReason: "aborted", drained: true }),
      facts({ drainMode: "stopping", trace: { entries: [], textStreamed: true, callsStarted: [] } }),
      {
        kind: "drained-tell",
        mode: "stopping",
        why: "after text was shown",
        text: "The gateway is stopping; I will finish this answer after it restarts.",
        results: 0,
      },
    ],
    [
      "aborted at the drain deadline (shutdown): resumes, a started call without result is cut short",
      result({ stopReason: "aborted" }),
      facts({
        aborted: true,
        abortReason: "shutdown",
        drainMode: "stopping",
        trace: { entries: [askedBash], textStreamed: false, callsStarted: ["c1"] },
      }),
      {
        kind: "drained-resume",
        mode: "stopping",
        why: "after a tool batch",
        text: "The gateway is stopping; your message will be answered after it restarts.",
        results: 1,
      },
    ],
    [
      "an automated turn a person interrupted after its batch: interrupted, never resumed",
      result({ stopReason: "aborted", drained: true }),
      facts({
        interrupted: { by: "telegram:42", source: "webhook" },
        trace: {
          entries: [askedBash, entry({ role: "tool", tool_call_id: "c1", content: "ok" })],
          textStreamed: false,
          callsStarted: ["c1"],
        },
      }),
      { kind: "interrupted", by: "telegram:42", source: "webhook", results: [] },
    ],
    [
      "interrupted while the gateway also drains: interrupted wins (the person's message runs next, not a resume)",
      result({ stopReason: "aborted", drained: true }),
      facts({
        drainMode: "stopping",
        interrupted: { by: "telegram:42", source: "reminder" },
        trace: { entries: [askedBash], textStreamed: false, callsStarted: [] },
      }),
      {
        kind: "interrupted",
        by: "telegram:42",
        source: "reminder",
        results: [NOT_RUN_INTERRUPTED],
      },
    ],
    [
      "interrupted, but the turn answered before it reached its next call: the reply stands",
      result({ text: "done" }),
      facts({ interrupted: { by: "telegram:42", source: "webhook" } }),
      { kind: "reply", text: "done" },
    ],
    [
      "interrupted and /stop: stopped",
      result({ stopReason: "aborted", drained: true }),
      facts({ aborted: true, abortReason: "stop", interrupted: { by: "telegram:42", source: "webhook" } }),
      { kind: "stopped" },
    ],
    [
      "drained but also aborted by /stop: stopped",
      result({ stopReason: "aborted", drained: true }),
      facts({ aborted: true, abortReason: "stop", drainMode: "stopping" }),
      { kind: "stopped" },
    ],
    [
      "parked at a tool call its gate asked about: parked, its record open",
      result({
        stopReason: "aborted",
        parked: { callId: "c1", name: "bash", arguments: "{}", reason: "ask" },
      }),
      facts(),
      { kind: "parked", open: true },
    ],
    [
      "parked, but /stop fired meanwhile: stopped",
      result({
        stopReason: "aborted",
        parked: { callId: "c1", name: "bash", arguments: "{}", reason: "ask" },
      }),
      facts({ aborted: true, abortReason: "stop" }),
      { kind: "stopped" },
    ],
    [
      "aborted by /stop: stopped, nobody told",
      result({ stopReason: "aborted" }),
      facts({ aborted: true, abortReason: "stop" }),
      { kind: "stopped" },
    ],
    [
      "an error with a line for the person: failed, told that line",
      result({ stopReason: "error", error: "the model endpoint refused" }),
      facts(),
      { kind: "failed", text: formatTurnNotice("the model endpoint refused") },
    ],
    [
      "a timeout without an error line: failed, told by its stop reason",
      result({ stopReason: "timeout" }),
      facts(),
      { kind: "failed", text: formatTurnNotice("timeout") },
    ],
  ];
  it.each(rows)("%s", (_name, turn, turnFacts, expected) => {
    expect(summary(decideSettlement(turn, turnFacts))).toEqual(expected);
  });

  it("a drained turn's missing results name the call and say it was cut short when it began", () => {
    const s = decideSettlement(
      result({ stopReason: "aborted", drained: true }),
      facts({ trace: { entries: [askedBash], textStreamed: false, callsStarted: ["c1"] } }),
    );
    expect(s.kind === "drained-resume" ? s.decision.results : undefined).toEqual([
      { callId: "c1", name: "bash", content: CUT_SHORT_STOPPED },
    ]);
  });
});

describe("settlementForError", () => {
  const full = Object.assign(new Error("no space left on device"), { code: "ENOSPC" });
  const rows: [string, unknown, { refused?: boolean; attempt?: number }, boolean, Record<string, unknown>][] =
    [
      ["a refused item settles refused", new Error("x"), { refused: true }, true, { kind: "refused" }],
      ["NotTaken settles refused", new NotTaken(new Error("fsync")), {}, true, { kind: "refused" }],
      [
        "a passing failure is retried after 1 s the first time",
        full,
        {},
        true,
        { kind: "retry", attempt: 1, delayMs: 1000, why: "no space left on device" },
      ],
      [
        "a passing failure's third try waits 4 s",
        full,
        { attempt: 2 },
        true,
        { kind: "retry", attempt: 3, delayMs: 4000, why: "no space left on device" },
      ],
      [
        "a passing failure where no retry is allowed is told at once",
        full,
        {},
        false,
        {
          kind: "error",
          why: "no space left on device",
          text: "Something went wrong: no space left on device. The session is ready for your next message.",
        },
      ],
      [
        "a bug is told at once",
        new Error("boom"),
        {},
        true,
        {
          kind: "error",
          why: "boom",
          text: "Something went wrong: boom. The session is ready for your next message.",
        },
      ],
    ];
  it.each(rows)("%s", (_name, error, item, retryable, expected) => {
    expect(summary(settlementForError(error, item, retryable))).toEqual(expected);
  });
});
