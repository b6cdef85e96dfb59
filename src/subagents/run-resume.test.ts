import { describe, expect, it } from "vitest";
import type { StoredChatMessage, TranscriptEntry } from "../sessions/types.js";
import type { RunRecord } from "./run-folder.js";
import { type ResumePoint, requesterMessage, resumePoint } from "./run-resume.js";
import { STARTED } from "./run-state.js";

const entry = (message: StoredChatMessage): TranscriptEntry => ({
  type: "message",
  id: "e",
  ts: "t",
  message,
});
const asks = (...ids: string[]) =>
  entry({
    role: "assistant",
    content: null,
    tool_calls: ids.map((id) => ({ id, type: "function", function: { name: "bash", arguments: "{}" } })),
  });
const result = (id: string) => entry({ role: "tool", tool_call_id: id, content: "ok" });
const parked: TranscriptEntry = {
  type: "tool-parked",
  id: "p",
  ts: "t",
  callIds: ["c2"],
  reason: "bash wants",
};
const kind = (entries: TranscriptEntry[]) => resumePoint(entries).kind;

describe("resumePoint: how a run found running or parked at start goes on", () => {
  it.each([
    ["nothing ran yet", [], "resume"],
    ["its batch complete", [asks("c1", "c2"), result("c1"), result("c2")], "resume"],
    ["a batch cut short (a call may have been under way)", [asks("c1", "c2"), result("c1")], "incomplete"],
    ["a response that asked, no result yet", [asks("c1")], "incomplete"],
    ["a batch that waits parked", [asks("c1", "c2"), result("c1"), parked], "incomplete"],
    [
      "a parked batch resumed and cut short",
      [asks("c1", "c2"), result("c1"), parked, result("c1")],
      "incomplete",
    ],
    ["a parked batch resumed and complete", [asks("c1", "c2"), result("c1"), parked, result("c2")], "resume"],
  ] as [string, TranscriptEntry[], ResumePoint["kind"]][])("%s: %s", (_, entries, expected) => {
    expect(kind(entries)).toBe(expected);
  });

  it("resumes with every message of the transcript", () => {
    const entries = [asks("c1"), result("c1")];
    expect(resumePoint(entries)).toEqual({
      kind: "resume",
      messages: entries.map((e) => (e as { message: StoredChatMessage }).message),
    });
  });

  it("a final answer the stop cut off before the run ended is its result", () => {
    expect(
      resumePoint([asks("c1"), result("c1"), entry({ role: "assistant", content: "the answer" })]),
    ).toEqual({ kind: "answered", text: "the answer" });
  });
});

describe("requesterMessage: the tools of a resumed run are its requester's", () => {
  const record = (authority: RunRecord["requester"]["authority"]): RunRecord => ({
    version: 1,
    id: "run-1",
    sessionKey: "main",
    sessionId: "s",
    requester: { channel: "telegram", senderId: "42", authority },
    route: { channel: "telegram", chatId: "42", chatType: "direct" },
    tools: ["bash"],
    noticeTools: ["bash", "remind"],
    brief: "b",
    startedAt: "t",
    state: STARTED,
  });

  it("a person's authority, channel and sender", () => {
    const m = requesterMessage(record("owner"));
    expect(m).toMatchObject({ channel: "telegram", senderId: "42", chatId: "42", authority: "owner" });
    expect(m.automated).toBeUndefined();
    expect(m.allowedTools).toBeUndefined();
  });

  it("an automated requester keeps the tools its turn had", () => {
    expect(requesterMessage(record("automated"))).toMatchObject({
      authority: "automated",
      automated: true,
      allowedTools: ["bash", "remind"],
    });
  });
});
