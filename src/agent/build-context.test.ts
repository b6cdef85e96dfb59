import { describe, expect, it } from "vitest";
import type { TranscriptEntry } from "../sessions/types.js";
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
