import { describe, expect, it } from "vitest";
import type { RestoredProgress } from "../choose-session.js";
import {
  type MessageFacts,
  NEW_SESSION_ANSWER,
  nextStep,
  type Prepared,
  prepareMessage,
  quoteLine,
} from "./prepare-message.js";

const facts = (extra: Partial<MessageFacts> = {}): MessageFacts => ({
  text: "hello",
  contextOnly: false,
  reset: { matched: false },
  progress: undefined,
  ...extra,
});
const stored: RestoredProgress = { sessionId: "s1", userStored: true };

describe("prepareMessage", () => {
  const rows: [string, MessageFacts, Prepared][] = [
    ["a message is stored as said", facts(), { kind: "message", lines: ["hello"], store: true }],
    ["group context is kept, not answered", facts({ contextOnly: true }), { kind: "context" }],
    [
      "group context is kept even when it is a reset trigger",
      facts({ contextOnly: true, reset: { matched: true, trigger: "/new", rest: "" } }),
      { kind: "context" },
    ],
    [
      "a reset trigger alone is answered at once",
      facts({ text: "/new", reset: { matched: true, trigger: "/new", rest: "" } }),
      { kind: "answer", text: NEW_SESSION_ANSWER },
    ],
    [
      "a reset trigger with only spaces after it is answered at once",
      facts({ text: "/new ", reset: { matched: true, trigger: "/new", rest: "  " } }),
      { kind: "answer", text: NEW_SESSION_ANSWER },
    ],
    [
      "a reset trigger with text: the text is the message",
      facts({ text: "/new Hi", reset: { matched: true, trigger: "/new", rest: "Hi" } }),
      { kind: "message", lines: ["Hi"], store: true },
    ],
    [
      "a restored reset trigger alone resumes (its message is already stored)",
      facts({ text: "/new", reset: { matched: true, trigger: "/new", rest: "" }, progress: stored }),
      { kind: "message", lines: [], store: false },
    ],
    [
      "a restored message whose line is not in the transcript is stored again",
      facts({ progress: { sessionId: "s1", userStored: false } }),
      { kind: "message", lines: ["hello"], store: true },
    ],
    [
      "a reply to a message carries its quote line",
      facts({ replyTo: { messageId: "m0", text: "earlier", senderName: "Ann" } }),
      { kind: "message", lines: ['[In reply to Ann: "earlier"]', "hello"], store: true },
    ],
  ];
  it.each(rows)("%s", (_name, input, expected) => {
    expect(prepareMessage(input)).toEqual(expected);
  });

  it("an approval's answer stores no message of its own", () => {
    expect(prepareMessage(facts({ resumesParked: true }))).toMatchObject({ kind: "message", store: false });
  });
});

describe("nextStep", () => {
  const rows: [string, Parameters<typeof nextStep>[0], ReturnType<typeof nextStep>][] = [
    [
      "a restored turn that parked and still waits parks again: no model, no tool",
      { progress: { ...stored, parked: "waiting" } },
      { kind: "parked", open: true },
    ],
    [
      "a restored turn that parked, whose batch an answer resumed, is handed on (its record ends)",
      { progress: { ...stored, parked: "handed-on" } },
      { kind: "parked", open: false },
    ],
    [
      "a parked restored turn parks again even with a stored reply",
      { progress: { ...stored, parked: "waiting", reply: "ok" } },
      { kind: "parked", open: true },
    ],
    [
      "an approval's answer with a parked batch: the model resumes it",
      { progress: undefined, approval: { parked: true } },
      { kind: "model" },
    ],
    [
      "an approval's answer with nothing parked",
      { progress: undefined, approval: { parked: false } },
      { kind: "nothing-parked" },
    ],
    [
      "an approval's answer whose reply is stored is sent again",
      { progress: { sessionId: "s", userStored: false, reply: "ok" }, approval: { parked: false } },
      { kind: "redeliver", text: "ok" },
    ],
    [
      "a restored turn whose reply is stored is sent again, without the model",
      { progress: { ...stored, reply: "done" } },
      { kind: "redeliver", text: "done" },
    ],
    [
      "a restored empty reply is sent again too",
      { progress: { ...stored, reply: "" } },
      { kind: "redeliver", text: "" },
    ],
    ["a restored turn without a reply runs the model", { progress: stored }, { kind: "model" }],
    ["a fresh message runs the model", { progress: undefined }, { kind: "model" }],
  ];
  it.each(rows)("%s", (_name, input, expected) => {
    expect(nextStep(input)).toEqual(expected);
  });
});

describe("quoteLine", () => {
  it("names who was replied to and cuts the text at 300 characters, on one line", () => {
    expect(quoteLine(undefined)).toBeUndefined();
    expect(quoteLine({ messageId: "m0", text: "" })).toBeUndefined();
    expect(quoteLine({ messageId: "m0", text: "a\n  b", fromAgent: true })).toBe(
      '[In reply to your message: "a b"]',
    );
    expect(quoteLine({ messageId: "m0", text: "x", senderId: "u1" })).toBe('[In reply to u1: "x"]');
    expect(quoteLine({ messageId: "m0", text: "x" })).toBe('[In reply to a message: "x"]');
    expect(quoteLine({ messageId: "m0", text: "y".repeat(301), senderName: "Bo" })).toBe(
      `[In reply to Bo: "${"y".repeat(300)}…"]`,
    );
  });
});
