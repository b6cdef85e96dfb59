import { describe, expect, it } from "vitest";
import type { MessageEntry, TranscriptEntry } from "../sessions/types.js";
import { buildContext, pairToolCalls } from "./build-context.js";

const ts = "2026-01-01T00:00:00.000Z";

describe("buildContext", () => {
  it("puts the system prompt, the compaction notes and kept messages, then later messages", () => {
    const entries: TranscriptEntry[] = [
      { type: "message", id: "1", ts, message: { role: "user", content: "later question" } },
      { type: "event", id: "2", ts, what: "ignored" },
      { type: "message", id: "3", ts, message: { role: "assistant", content: "later answer" } },
    ];
    const messages = buildContext({
      systemPrompt: "be brief",
      compaction: {
        type: "compaction",
        id: "c",
        ts,
        notes: "they like tea",
        kept: [{ role: "user", content: "kept" }],
      },
      entries,
    });
    expect(messages.map((m) => `${m.role}:${m.content}`)).toEqual([
      "system:be brief",
      "user:[Notes on the earlier part of this conversation, which was compacted]\nthey like tea",
      "user:kept",
      "user:later question",
      "assistant:later answer",
    ]);
  });

  it("starts every context after one compaction with the same notes and history objects", () => {
    const compaction = { type: "compaction" as const, id: "c", ts, notes: "tea", kept: [] };
    const entries: TranscriptEntry[] = [
      { type: "message", id: "1", ts, message: { role: "user", content: "q" } },
    ];
    const first = buildContext({ systemPrompt: "s", compaction, entries });
    const next = buildContext({ systemPrompt: "s", compaction, entries });
    // What request-body.ts keys the reuse of the last request's bytes by (the first message after the prompt).
    expect(next[1]).toBe(first[1]);
    expect(next[2]).toBe(first[2]);
  });
});

describe("buildContext in a group", () => {
  const said: MessageEntry = {
    type: "message",
    id: "1",
    ts,
    message: { role: "user", content: "hi" },
    meta: { chatType: "group", senderName: "Ann", journalId: "j1" },
  };

  it("shows who said a message, as the same object in every context built from the same entry", () => {
    const first = buildContext({ systemPrompt: "s", entries: [said] });
    const next = buildContext({ systemPrompt: "s", entries: [said] });
    expect(first[1]).toEqual({ role: "user", content: "Ann: hi" });
    // request-body.ts reuses the bytes of a message it sent before when it is the same object.
    expect(next[1]).toBe(first[1]);
    expect(said.message.content).toBe("hi");
  });

  it("marks the message once a turn-failed entry names it, and not in contexts without that entry", () => {
    const plain = buildContext({ systemPrompt: "s", entries: [said] });
    const failed = buildContext({
      systemPrompt: "s",
      entries: [said, { type: "turn-failed", id: "2", ts, journalId: "j1" } as TranscriptEntry],
    });
    expect(failed[1]?.content).toBe(
      "[Earlier message that was not answered at the time (the turn failed); history, not a question to answer now]\nAnn: hi",
    );
    expect(buildContext({ systemPrompt: "s", entries: [said] })[1]).toBe(plain[1]);
  });
});

describe("pairToolCalls", () => {
  it("adds a synthetic result for a call left without one and drops stray results", () => {
    const out = pairToolCalls([
      { role: "user", content: "go" },
      {
        role: "assistant",
        content: null,
        tool_calls: [
          { id: "a", type: "function", function: { name: "bash", arguments: "{}" } },
          { id: "b", type: "function", function: { name: "bash", arguments: "{}" } },
        ],
      },
      { role: "tool", tool_call_id: "a", content: "ok" },
      { role: "tool", tool_call_id: "zzz", content: "stray" },
      { role: "user", content: "next" },
    ]);
    expect(out.map((m) => `${m.role}:${m.tool_call_id ?? ""}:${m.content ?? ""}`)).toEqual([
      "user::go",
      "assistant::",
      "tool:a:ok",
      "tool:b:(no result: the turn was interrupted)",
      "user::next",
    ]);
  });
});
