import { describe, expect, it } from "vitest";
import type { TranscriptEntry } from "../sessions/types.js";
import { answerFromEntries } from "./openai-recover.js";

const where = { sessionKey: "main", sessionId: "s1" };
const user = (messageId: string, journalId: string): TranscriptEntry =>
  ({
    type: "message",
    id: `u-${journalId}`,
    ts: "2026-12-06T10:00:05.000Z",
    message: { role: "user", content: "hi" },
    meta: { channel: "openai", chatId: "openai:x", messageId, journalId },
  }) as TranscriptEntry;
const assistant = (
  journalId: string,
  content: string,
  extra: Record<string, unknown> = {},
): TranscriptEntry =>
  ({
    type: "message",
    id: `a-${content}`,
    ts: "2026-12-06T10:00:06.000Z",
    message: { role: "assistant", content, ...extra },
    meta: { journalId, model: "m", usage: { promptTokens: 10, completionTokens: 2, totalTokens: 12 } },
  }) as TranscriptEntry;

describe("answerFromEntries", () => {
  it("the last assistant text of the message's record, usage summed over its model calls", () => {
    const entries = [
      user("idempotency:k", "j1"),
      assistant("j1", "", {
        tool_calls: [{ id: "c", type: "function", function: { name: "x", arguments: "{}" } }],
      }),
      assistant("other", "not this one"),
      assistant("j1", "the reply"),
    ];
    expect(answerFromEntries(entries, "idempotency:k", where)).toEqual({
      journalId: "j1",
      at: Date.parse("2026-12-06T10:00:05.000Z"),
      outcome: {
        ...where,
        payloads: [{ text: "the reply" }],
        stopReason: "end",
        model: "m",
        usage: { promptTokens: 20, completionTokens: 4, totalTokens: 24 },
        durationMs: 0,
      },
    });
  });

  it("a message without its reply yet is running; a failed one is an error; another id is not there", () => {
    expect(answerFromEntries([user("idempotency:k", "j1")], "idempotency:k", where)).toBe("running");
    const failed = answerFromEntries(
      [user("idempotency:k", "j1"), { type: "turn-failed", journalId: "j1", reason: "model down" } as never],
      "idempotency:k",
      where,
    );
    expect(failed).toMatchObject({ outcome: { stopReason: "error", error: "model down", payloads: [] } });
    expect(answerFromEntries([user("idempotency:k", "j1")], "idempotency:other", where)).toBeUndefined();
  });
});
