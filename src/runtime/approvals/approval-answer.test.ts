import { describe, expect, it } from "vitest";
import type { ApprovalAsk } from "../../sessions/approval-record.js";
import {
  type AnswerRoute,
  type AnswerSender,
  type ApprovalAnswer,
  askFor,
  parseApprovalAnswer,
  promptText,
  routeMessage,
  wroteInsteadNote,
} from "./approval-answer.js";

describe("parseApprovalAnswer", () => {
  it.each<[string, ApprovalAnswer | undefined]>([
    ["/approve", { kind: "approve" }],
    ["  /APPROVE  ", { kind: "approve" }],
    ["/approve@clawdis_bot", { kind: "approve" }],
    ["@clawdis_bot /approve", { kind: "approve" }],
    ["@clawdis_bot /deny no", { kind: "deny", reason: "no" }],
    ["/approve always", { kind: "approve-always" }],
    ["/approve Always git status*", { kind: "approve-always", pattern: "git status*" }],
    ["/approve now please", undefined],
    ["/approved", undefined],
    ["/deny", { kind: "deny" }],
    ["/deny not on my laptop", { kind: "deny", reason: "not on my laptop" }],
    ["/deny@clawdis_bot too risky", { kind: "deny", reason: "too risky" }],
    ["approve", undefined],
    ["please /approve", undefined],
    ["", undefined],
  ])("%j", (text, expected) => {
    expect(parseApprovalAnswer(text)).toEqual(expected);
  });
});

describe("routeMessage", () => {
  const ask: Pick<ApprovalAsk, "requester"> = {
    requester: { channel: "telegram", senderId: "bob", authority: "allowed" },
  };
  const bob: AnswerSender = { channel: "telegram", senderId: "bob", authority: "allowed" };
  const owner: AnswerSender = { channel: "telegram", senderId: "alice", authority: "owner" };
  const carol: AnswerSender = { channel: "telegram", senderId: "carol", authority: "allowed" };
  const bobElsewhere: AnswerSender = { channel: "whatsapp", senderId: "bob", authority: "allowed" };
  const webhook: AnswerSender = { channel: "telegram", senderId: "internal:x", authority: "automated" };
  const reminder: AnswerSender = { ...webhook, internal: "other" };
  const resume: AnswerSender = {
    channel: "telegram",
    senderId: "bob",
    authority: "allowed",
    internal: "approval-answer",
  };
  const yes: ApprovalAnswer = { kind: "approve" };
  const automatedAsk: Pick<ApprovalAsk, "requester"> = {
    requester: { channel: "webhook", senderId: "hook:ci", authority: "automated" },
  };
  const stranger: AnswerSender = { channel: "telegram", senderId: "dave", authority: "untrusted" };

  it.each<
    [
      string,
      Pick<ApprovalAsk, "requester"> | undefined,
      AnswerSender,
      ApprovalAnswer | undefined,
      AnswerRoute,
    ]
  >([
    ["nothing waits, a message", undefined, bob, undefined, "pass"],
    ["nothing waits, an answer", undefined, bob, yes, "nothing-waits"],
    ["nothing waits, a webhook's /approve is only text", undefined, webhook, yes, "pass"],
    ["the person answers", ask, bob, yes, "decide"],
    ["the owner answers", ask, owner, { kind: "deny" }, "decide"],
    ["another member answers", ask, carol, yes, "ignore"],
    ["the same id on another channel is another person", ask, bobElsewhere, yes, "ignore"],
    ["a webhook's /approve never answers", ask, webhook, yes, "hold"],
    ["a reminder waits", ask, reminder, undefined, "hold"],
    ["the person writes instead", ask, bob, undefined, "wrote-instead"],
    ["the owner writes something else: waits", ask, owner, undefined, "hold"],
    ["another member writes: waits", ask, carol, undefined, "hold"],
    ["the core's answer resumes the batch", ask, resume, undefined, "pass"],
    [
      "an automated turn waits: the owner writes something else, it gives way",
      automatedAsk,
      owner,
      undefined,
      "wrote-instead",
    ],
    [
      "an automated turn waits: an allowed person writes, it gives way",
      automatedAsk,
      carol,
      undefined,
      "wrote-instead",
    ],
    ["an automated turn waits: an untrusted member writes, waits", automatedAsk, stranger, undefined, "hold"],
    ["an automated turn waits: another automated input waits", automatedAsk, reminder, undefined, "hold"],
    [
      "an automated turn waits: an allowed person's /approve is not theirs to give",
      automatedAsk,
      carol,
      yes,
      "ignore",
    ],
    ["an automated turn waits: the owner's /approve decides", automatedAsk, owner, yes, "decide"],
  ])("%s", (_what, a, sender, answer, expected) => {
    expect(routeMessage(a, sender, answer)).toBe(expected);
  });
});

describe("promptText", () => {
  it("names what will run; bash offers /approve always", () => {
    const text = promptText({ tool: "bash", what: "bash wants to run\nls\nin /w", waiting: ["c1"] });
    expect(text).toBe(
      "Approval needed: bash wants to run\nls\nin /w\nAnswer /approve, /approve always (this exact command runs without asking from now on) or /deny [reason].",
    );
    const file = promptText({
      tool: "send_file",
      what: "send_file wants to send /etc/hosts (9 bytes)",
      waiting: ["c1", "c2"],
    });
    expect(file).not.toContain("always");
    expect(file).toContain("1 more call(s)");
  });
});

describe("wroteInsteadNote", () => {
  it("tells the turn's person they wrote instead; on an automated turn, who wrote and that it stopped", () => {
    expect(wroteInsteadNote("allowed", "Bob")).toBe("Not run: you wrote instead.");
    expect(wroteInsteadNote("owner", "Alice")).toBe("Not run: you wrote instead.");
    expect(wroteInsteadNote("automated", "Alice")).toBe(
      "Not run: Alice wrote, so the automated turn stopped.",
    );
  });
});

describe("askFor: the approval a message is routed by", () => {
  const ask = (id: string, senderId: string, subagent?: string) => ({
    id,
    requester: { channel: "tg", senderId, authority: "allowed" as const },
    ...(subagent ? { subagent } : {}),
  });
  const child = ask("child", "alice", "run-1");
  const own = ask("own", "bob");
  const alice = { channel: "tg", senderId: "alice", authority: "allowed" as const };
  const bob = { channel: "tg", senderId: "bob", authority: "allowed" as const };
  const owner = { channel: "tg", senderId: "olga", authority: "owner" as const };
  const carol = { channel: "tg", senderId: "carol", authority: "allowed" as const };

  it.each([
    ["anything else, by the session's own approval, not a child's", [child, own], bob, undefined, "own"],
    ["anything else, with only a child's waiting: none", [child], alice, undefined, undefined],
    ["an answer: the oldest its sender may decide", [child, own], bob, { kind: "approve" }, "own"],
    ["an answer from the child's requester: the child's", [child, own], alice, { kind: "approve" }, "child"],
    ["an answer from the owner: the oldest", [child, own], owner, { kind: "deny" }, "child"],
    [
      "an answer from someone who may decide none: the oldest (ignored)",
      [child, own],
      carol,
      { kind: "approve" },
      "child",
    ],
  ] as const)("%s", (_, pending, sender, answer, expected) => {
    expect(askFor(pending, sender, answer)?.id).toBe(expected);
  });
});
