import { describe, expect, it } from "vitest";
import type { TurnResult } from "../../agent/run-turn.js";
import type { LogFieldValue } from "../../sessions/log-line.js";
import type { SessionLog } from "../../sessions/session-log.js";
import { TurnLog } from "./turn-log.js";

/** A SessionLog that keeps its lines; arguments "redacted" as their length, so the test sees they went through it. */
function recording() {
  const lines: { kind: string; fields: Record<string, LogFieldValue> }[] = [];
  const log: SessionLog = {
    line: (kind, fields) => lines.push({ kind, fields: { ...fields } }),
    redactArguments: (json) => `<${json.length}>`,
  };
  return { log, lines };
}

const subject = { turnId: "0123456789abcdef", channel: "telegram", chatId: "42", senderId: "7" };

function result(extra: Partial<TurnResult> = {}): TurnResult {
  return {
    stopReason: "end",
    text: "ok",
    model: "m",
    usage: { promptTokens: 100, completionTokens: 20, totalTokens: 120 },
    contextTokens: 100,
    contextEstimated: false,
    rounds: 2,
    compactions: 0,
    guard: {} as TurnResult["guard"],
    ...extra,
  };
}

describe("TurnLog", () => {
  it("writes a model line per model call, a tool line per result, a compaction line, then the turn line", () => {
    const { log, lines } = recording();
    let now = 1000;
    const turn = new TurnLog(log, subject, () => now);
    turn.start();
    turn.entries([
      {
        type: "message",
        id: "a",
        ts: "t",
        message: {
          role: "assistant",
          content: "",
          tool_calls: [{ id: "c1", type: "function", function: { name: "bash", arguments: "{}" } }],
        },
        meta: { model: "m", usage: { promptTokens: 90, completionTokens: 10 } },
      },
    ]);
    turn.event({
      type: "tool-call",
      sessionKey: "main",
      turnId: "t",
      callId: "c1",
      name: "bash",
      arguments: '{"command":"ls"}',
    });
    now = 1030;
    turn.event({
      type: "tool-result",
      sessionKey: "main",
      turnId: "t",
      callId: "c1",
      name: "bash",
      ok: true,
      output: "a\nb",
    });
    turn.entries([
      {
        type: "compaction",
        id: "c",
        ts: "t",
        notes: "n",
        replacedEntries: 4,
        tokensBefore: 900,
        tokensAfter: 300,
        notesBy: "m",
      } as never,
      {
        type: "message",
        id: "b",
        ts: "t",
        message: { role: "assistant", content: "ok" },
        meta: { model: "m", final: true },
      },
      { type: "message", id: "u", ts: "t", message: { role: "tool", content: "x", tool_call_id: "c1" } },
    ]);
    now = 1500;
    turn.end(result());
    expect(lines).toEqual([
      {
        kind: "model",
        fields: { turn: "01234567", model: "m", tokensIn: 90, tokensOut: 10, toolCalls: 1, final: undefined },
      },
      {
        kind: "tool",
        fields: { turn: "01234567", name: "bash", ok: true, durationMs: 30, args: "<16>", output: "3 chars" },
      },
      {
        kind: "compaction",
        fields: {
          turn: "01234567",
          tokensBefore: 900,
          tokensAfter: 300,
          replaced: 4,
          toolResultsCleared: undefined,
          notesBy: "m",
        },
      },
      {
        kind: "model",
        fields: {
          turn: "01234567",
          model: "m",
          tokensIn: undefined,
          tokensOut: undefined,
          toolCalls: 0,
          final: true,
        },
      },
      {
        kind: "turn",
        fields: {
          turn: "01234567",
          channel: "telegram",
          chat: "42",
          sender: "7",
          durationMs: 500,
          tokensIn: 100,
          tokensOut: 20,
          stop: "end",
          rounds: 2,
          error: undefined,
        },
      },
    ]);
  });

  it.each([
    ["a turn that threw", undefined, "error"],
    ["a parked turn", result({ parked: {} as TurnResult["parked"] }), "waiting"],
    ["a stopped turn", result({ stopReason: "aborted", error: "stopped" }), "aborted"],
  ])("%s: its stop reason", (_name, ended, stop) => {
    const { log, lines } = recording();
    const turn = new TurnLog(log, subject, () => 0);
    turn.start();
    turn.end(ended);
    expect(lines.at(-1)?.fields.stop).toBe(stop);
  });

  it("a tool call without a result is written at the end as unfinished, before the turn line", () => {
    const { log, lines } = recording();
    const turn = new TurnLog(log, subject, () => 0);
    turn.start();
    turn.event({
      type: "tool-call",
      sessionKey: "main",
      turnId: "t",
      callId: "c9",
      name: "bash",
      arguments: "{}",
    });
    turn.end(result({ stopReason: "aborted" }));
    expect(lines.map((l) => [l.kind, l.fields.ok])).toEqual([
      ["tool", "unfinished"],
      ["turn", undefined],
    ]);
  });
});
