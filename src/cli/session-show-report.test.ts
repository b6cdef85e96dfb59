import { describe, expect, it } from "vitest";
import type { TranscriptEntry } from "../sessions/types.js";
import { buildShowReport, lastTurns, renderShowReport, tailLines } from "./session-show-report.js";

const user = (text: string, ts: string): TranscriptEntry =>
  ({
    type: "message",
    id: ts,
    ts,
    message: { role: "user", content: text },
    meta: { channel: "telegram", senderId: "7" },
  }) as TranscriptEntry;
const calls = (...names: string[]): TranscriptEntry =>
  ({
    type: "message",
    id: "c",
    ts: "t",
    message: {
      role: "assistant",
      content: "",
      tool_calls: names.map((name, i) => ({
        id: `c${i}`,
        type: "function",
        function: { name, arguments: "{}" },
      })),
    },
  }) as TranscriptEntry;
const answer = (text: string): TranscriptEntry =>
  ({
    type: "message",
    id: "f",
    ts: "t",
    message: { role: "assistant", content: text },
    meta: { final: true },
  }) as TranscriptEntry;

describe("lastTurns", () => {
  const entries = [
    answer("before any person spoke: ignored"),
    user("one", "t1"),
    answer("first"),
    user("two", "t2"),
    calls("bash", "read_file"),
    {
      type: "message",
      id: "r",
      ts: "t",
      message: { role: "tool", content: "x", tool_call_id: "c0" },
    } as TranscriptEntry,
    answer("second"),
    { type: "compaction", id: "k", ts: "t", notes: "n" } as TranscriptEntry,
    user("three", "t3"),
  ];

  it.each([
    ["the last two, oldest first", 2, ["two", "three"]],
    ["all when fewer", 10, ["one", "two", "three"]],
    ["none for 0", 0, []],
  ])("%s", (_name, count, texts) => {
    expect(lastTurns(entries, count).map((t) => t.text)).toEqual(texts);
  });

  it("gives each turn its tools and final reply; a turn without an answer has no reply", () => {
    expect(lastTurns(entries, 2)).toEqual([
      {
        at: "t2",
        channel: "telegram",
        sender: "7",
        text: "two",
        tools: ["bash", "read_file"],
        reply: "second",
      },
      { at: "t3", channel: "telegram", sender: "7", text: "three", tools: [] },
    ]);
  });
});

describe("tailLines", () => {
  it.each([
    ["the last lines", "a\nb\nc\n", 2, ["b", "c"]],
    ["a file without a final newline", "a\nb", 5, ["a", "b"]],
    ["an empty file", "", 3, []],
    ["none for 0", "a\n", 0, []],
  ])("%s", (_name, text, count, expected) => {
    expect(tailLines(text, count)).toEqual(expected);
  });
});

describe("renderShowReport", () => {
  it("names the paths, the turns and the log tail", () => {
    const report = buildShowReport({
      key: "main",
      entry: { sessionId: "s1", updatedAt: 5 },
      paths: {
        transcript: "/s/s1.jsonl",
        folder: "/s/s1",
        workspace: "/w",
        inbox: "/w/inbox",
        attachmentStaging: "/s/s1/attachment-staging",
        artifacts: "/s/s1/artifacts",
        log: "/s/s1/logs/session.log",
      },
      entries: [user("hello\nthere", "t1"), answer("hi")],
      log: "L1\nL2\n",
      turns: 5,
      lines: 1,
      phase: "ready",
    });
    expect(renderShowReport(report)).toBe(
      [
        "session main (ready)",
        "  id          s1",
        "  folder      /s/s1",
        "  transcript  /s/s1.jsonl",
        "  workspace   /w",
        "  log         /s/s1/logs/session.log",
        "",
        "last turn:",
        "  t1 telegram:7: hello there",
        "    reply: hi",
        "",
        "log tail:",
        "  L2",
      ].join("\n"),
    );
  });

  it("lists the background jobs last, each as job_status words it", () => {
    const report = buildShowReport({
      key: "main",
      entry: { sessionId: "s1", updatedAt: 5 },
      paths: {
        transcript: "/s/s1.jsonl",
        folder: "/s/s1",
        workspace: "/w",
        inbox: "/w/inbox",
        attachmentStaging: "/s/s1/attachment-staging",
        artifacts: "/s/s1/artifacts",
        log: "/s/s1/logs/session.log",
      },
      entries: [],
      log: "",
      turns: 5,
      lines: 5,
      jobs: [
        { id: "j1", command: "make", cwd: "/w", startedAt: 0, state: "reaped", endedAt: 65_000 },
        { id: "j2", command: "sleep 9", cwd: "/w", startedAt: 60_000, state: "running" },
      ],
      now: 70_000,
    });
    expect(renderShowReport(report).split("\n").slice(-3)).toEqual([
      "background jobs:",
      "  j1  reaped (the gateway that ran it stopped; its log is kept), ran 1m5s  make",
      "  j2  running, ran 10s  sleep 9",
    ]);
  });
});
