import { describe, expect, it } from "vitest";
import { NOTICE_QUOTE_CHARS, noticeText, runEnding } from "./run-ending.js";

describe("runEnding", () => {
  it.each([
    ["a final answer", { stopReason: "end", text: "42" }, undefined, "finish", "42"],
    [
      "a quiet stop of the loop guard",
      { stopReason: "tool-loop", text: "gave up", quiet: true },
      undefined,
      "finish",
      "gave up",
    ],
    [
      "a cut reply",
      { stopReason: "output-limit", text: "" },
      undefined,
      "fail",
      /artifacts\/truncated-output\.md/,
    ],
    [
      "a watchdog",
      { stopReason: "timeout", text: "", error: "the model went silent" },
      undefined,
      "fail",
      /failed \(timeout\): the model went silent/,
    ],
    [
      "a drained turn",
      { stopReason: "aborted", text: "", drained: true },
      undefined,
      "owner_restarted",
      /none of its tool calls runs again/,
    ],
    [
      "an abort for a stop",
      { stopReason: "aborted", text: "" },
      "restart",
      "owner_restarted",
      /stopped or restarted/,
    ],
    [
      "a cancel, whatever the turn did",
      { stopReason: "end", text: "done anyway" },
      "cancel",
      "cancel",
      /Cancelled/,
    ],
  ] as const)("%s", (_what, turn, cause, event, result) => {
    const ending = runEnding(turn, cause);
    expect(ending.event).toBe(event);
    if (typeof result === "string") expect(ending.result).toBe(result);
    else expect(ending.result).toMatch(result);
  });
});

describe("noticeText", () => {
  it("names result.md and quotes it", () => {
    expect(noticeText("run-1", "done", "/s/subagents/run-1/result.md", "all good")).toBe(
      "[sub-agent run-1 done] Its result is in /s/subagents/run-1/result.md:\nall good",
    );
  });
  it("quotes a long result only in part", () => {
    const text = noticeText("run-1", "done", "r.md", "x".repeat(NOTICE_QUOTE_CHARS + 1));
    expect(text).toContain(`${"x".repeat(NOTICE_QUOTE_CHARS)}\n[… cut here; the rest is in the file]`);
    expect(text).not.toContain("x".repeat(NOTICE_QUOTE_CHARS + 1));
  });
});
