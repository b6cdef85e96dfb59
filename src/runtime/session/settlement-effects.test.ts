import { describe, expect, it } from "vitest";
import type { TurnResult } from "../../agent/run-turn.js";
import type { OutboundAttachment } from "../../plugin-api/types.js";
import { interruptedNote, NOT_RUN_INTERRUPTED } from "../authority/authority.js";
import type { DrainDecision } from "../drain-resume.js";
import type { WorkItem } from "../work-item.js";
import type { Settlement } from "./settlement.js";
import { type Effect, type SettleTarget, settlementEffects } from "./settlement-effects.js";

const item = (jid: string): WorkItem => ({
  jid,
  local: false,
  text: "hi",
  sessionKey: "main",
  message: {
    channel: "telegram",
    chatId: "c1",
    chatType: "direct",
    senderId: "u1",
    messageId: `m-${jid}`,
    text: "hi",
    receivedAt: 0,
  },
  resolve: () => {},
});
const a = item("a");
const b = item("b");
const ids = { sessionKey: "main", sessionId: "s1" };
const result = (extra: Partial<TurnResult> = {}): TurnResult => ({
  stopReason: "end",
  text: "answer",
  model: "m",
  contextTokens: 1,
  contextEstimated: false,
  rounds: 1,
  compactions: 0,
  guard: {} as TurnResult["guard"],
  ...extra,
});
const usage = { promptTokens: 10, completionTokens: 2, totalTokens: 12 };
const file: OutboundAttachment = { kind: "image", path: "/w/out.png", mimeType: "image/png" };

/** A turn's target: item `a`, `b` joined it, the reply attaches `file`, the parked record `p` ends with it. */
const turn: SettleTarget = { key: "main", item: a, joined: [b], ids, attachments: [file], alsoEnd: ["p"] };
/** A message settled before any turn: its key and item alone. */
const bare: SettleTarget = { key: "main", item: a };

const notice = (text: string): Effect => ({ kind: "deliver", text, as: "notice", end: [], attachments: [] });
const resolve = (
  w: WorkItem,
  stopReason: string,
  payloads: string[],
  error: string | undefined,
  extra: object,
): Effect =>
  ({ kind: "resolve", item: w, stopReason, payloads, ...(error ? { error } : {}), extra }) as Effect;
const drained: DrainDecision = {
  action: "resume",
  why: "after a tool batch",
  results: [{ callId: "c1", name: "bash", content: "Not run: the gateway stopped before this call ran." }],
};

describe("settlementEffects", () => {
  const rows: [string, Settlement, SettleTarget, Effect[]][] = [
    [
      "not-run: only the outcome, aborted; nothing sent, nothing ended (the record is replayed)",
      { kind: "not-run" },
      bare,
      [resolve(a, "aborted", [], "the gateway is stopping", { sessionKey: "main" })],
    ],
    [
      "answer: a notice that ends the item's record, then the `command` outcome with the ids given",
      { kind: "answer", text: "Stopped.", extra: ids },
      bare,
      [
        { kind: "deliver", text: "Stopped.", as: "notice", end: ["a"], attachments: [] },
        resolve(a, "command", ["Stopped."], undefined, ids),
      ],
    ],
    [
      "context-kept: a group-context entry, the record ends filtered, nothing sent",
      { kind: "context-kept", at: 7 },
      { key: "main", item: a, ids },
      [
        { kind: "append", entries: { kind: "group-context", item: a, at: 7 }, transcript: "turn" },
        { kind: "end", jid: "a", status: "filtered", reason: "not addressed: kept as group context" },
        resolve(a, "filtered", [], undefined, ids),
      ],
    ],
    [
      "no-model: told how to set one, marked unanswered, the record ends failed-told",
      { kind: "no-model", text: "No model." },
      { key: "main", item: a, ids },
      [
        notice("No model."),
        {
          kind: "append",
          entries: { kind: "unanswered", items: [a], reason: "no model configured" },
          transcript: "turn",
        },
        { kind: "end", jid: "a", status: "failed-told", reason: "no model configured" },
        resolve(a, "error", ["No model."], "no model configured", ids),
      ],
    ],
    [
      "reply: the message event, one delivery ending every record (the item's, the joined, the parked one), then each outcome",
      { kind: "reply", text: "answer", result: result({ usage }) },
      turn,
      [
        { kind: "emit-reply", text: "answer" },
        { kind: "deliver", text: "answer", as: "reply", end: ["a", "b", "p"], attachments: [file] },
        resolve(a, "end", ["answer"], undefined, { ...ids, model: "m", usage }),
        resolve(b, "end", ["answer"], undefined, { ...ids, model: "m", usage }),
      ],
    ],
    [
      "reply found in the transcript (no result): synced to disk first, the outcome has no model",
      { kind: "reply", text: "done" },
      { key: "main", item: a, ids },
      [
        { kind: "sync" },
        { kind: "emit-reply", text: "done" },
        { kind: "deliver", text: "done", as: "reply", end: ["a"], attachments: [] },
        resolve(a, "end", ["done"], undefined, ids),
      ],
    ],
    [
      "quiet-reply: as a reply",
      { kind: "quiet-reply", text: "quiet", result: result({ stopReason: "tool-loop", quiet: true }) },
      { key: "main", item: a, ids },
      [
        { kind: "emit-reply", text: "quiet" },
        { kind: "deliver", text: "quiet", as: "reply", end: ["a"], attachments: [] },
        resolve(a, "end", ["quiet"], undefined, { ...ids, model: "m" }),
      ],
    ],
    [
      "drained-resume: logged, the missing results first, a notice, the joined record ends, the item's stays open",
      { kind: "drained-resume", text: "Stopping.", mode: "stopping", decision: drained },
      turn,
      [
        {
          kind: "log",
          level: "info",
          message: "turn drained",
          fields: {
            session: "main",
            journalId: "a",
            action: "resume",
            why: "after a tool batch",
            callsWithoutResult: 1,
            othersWaiting: 3,
          },
        },
        {
          kind: "append",
          entries: { kind: "missing-results", results: drained.results },
          transcript: "turn",
        },
        notice("Stopping."),
        { kind: "end", jid: "b", status: "replied", reason: "joined a, which resumes" },
        resolve(a, "aborted", ["Stopping."], "the gateway is stopping", ids),
        resolve(b, "aborted", ["Stopping."], "the gateway is stopping", ids),
      ],
    ],
    [
      "interrupted: logged, the missing results, the note, every record ends interrupted, outcomes aborted; nobody told",
      {
        kind: "interrupted",
        by: "telegram:42",
        source: "reminder",
        results: [{ callId: "c1", name: "bash", content: NOT_RUN_INTERRUPTED }],
      },
      turn,
      [
        {
          kind: "log",
          level: "info",
          message: "automated turn ended after its tool batch: a person wrote",
          fields: {
            session: "main",
            journalId: "a",
            source: "reminder",
            by: "telegram:42",
            callsWithoutResult: 1,
          },
        },
        {
          kind: "append",
          entries: {
            kind: "missing-results",
            results: [{ callId: "c1", name: "bash", content: NOT_RUN_INTERRUPTED }],
          },
          transcript: "turn",
        },
        {
          kind: "append",
          entries: { kind: "interrupted-note", jid: "a", note: interruptedNote("reminder") },
          transcript: "turn",
        },
        { kind: "end", jid: "a", status: "interrupted", reason: "interrupted: telegram:42 wrote" },
        { kind: "end", jid: "b", status: "interrupted", reason: "interrupted: telegram:42 wrote" },
        { kind: "end", jid: "p", status: "interrupted", reason: "interrupted: telegram:42 wrote" },
        resolve(a, "aborted", [], "interrupted: telegram:42 wrote", ids),
        resolve(b, "aborted", [], "interrupted: telegram:42 wrote", ids),
      ],
    ],
    [
      "drained-tell without missing results: no entries appended",
      {
        kind: "drained-tell",
        text: "Restarting.",
        mode: "restarting",
        decision: { action: "resume", why: "after text was shown", results: [] },
      },
      { key: "main", item: a, ids },
      [
        {
          kind: "log",
          level: "info",
          message: "turn drained",
          fields: {
            session: "main",
            journalId: "a",
            action: "resume",
            why: "after text was shown",
            othersWaiting: 3,
          },
        },
        notice("Restarting."),
        resolve(a, "aborted", ["Restarting."], "the gateway is restarting", ids),
      ],
    ],
    [
      "stopped: nobody told, nothing marked; every record ends failed-told, the parked one last",
      { kind: "stopped", result: result({ stopReason: "aborted" }) },
      turn,
      [
        { kind: "end", jid: "a", status: "failed-told", reason: "aborted" },
        resolve(a, "aborted", [], "aborted", { ...ids, model: "m" }),
        { kind: "end", jid: "b", status: "failed-told", reason: "aborted" },
        resolve(b, "aborted", [], "aborted", { ...ids, model: "m" }),
        { kind: "end", jid: "p", status: "failed-told", reason: "aborted" },
      ],
    ],
    [
      "failed: told once, every message marked unanswered, every record ends failed-told",
      { kind: "failed", result: result({ stopReason: "timeout", error: "late", usage }), text: "⚠️ late" },
      turn,
      [
        notice("⚠️ late"),
        {
          kind: "append",
          entries: { kind: "unanswered", items: [a, b], reason: "late" },
          transcript: "turn",
        },
        { kind: "end", jid: "a", status: "failed-told", reason: "late" },
        resolve(a, "timeout", ["⚠️ late"], "late", { ...ids, model: "m", usage }),
        { kind: "end", jid: "b", status: "failed-told", reason: "late" },
        resolve(b, "timeout", ["⚠️ late"], "late", { ...ids, model: "m", usage }),
        { kind: "end", jid: "p", status: "failed-told", reason: "late" },
      ],
    ],
    [
      "parked (open): logged, the joined record ends, the item's stays open, outcomes `waiting`",
      { kind: "parked", open: true },
      turn,
      [
        {
          kind: "log",
          level: "info",
          message: "turn parked at a tool call; waiting for an answer",
          fields: { session: "main", journalId: "a" },
        },
        { kind: "end", jid: "b", status: "replied", reason: "joined a, which waits for an answer" },
        resolve(a, "waiting", [], undefined, ids),
        resolve(b, "waiting", [], undefined, ids),
      ],
    ],
    [
      "parked, handed on: the item's record ends too (the answer's reply answers it)",
      { kind: "parked", open: false },
      { key: "main", item: a, ids },
      [
        {
          kind: "log",
          level: "info",
          message: "parked turn handed on",
          fields: { session: "main", journalId: "a" },
        },
        { kind: "end", jid: "a", status: "replied", reason: "its parked batch was resumed by an answer" },
        resolve(a, "waiting", [], undefined, ids),
      ],
    ],
    [
      "retry, first failure: logged, the outcome says the message is kept, then it runs again later",
      { kind: "retry", why: "disk full", attempt: 1, delayMs: 1000 },
      bare,
      [
        {
          kind: "log",
          level: "warn",
          message: "message kept after a passing failure; trying again",
          fields: { sessionKey: "main", journalId: "a", attempt: 1, retryInMs: 1000, error: "disk full" },
        },
        resolve(
          a,
          "error",
          ["Your message is kept and will be answered once this clears: disk full."],
          "disk full",
          {
            sessionKey: "main",
          },
        ),
        { kind: "retry", attempt: 1, delayMs: 1000 },
      ],
    ],
    [
      "retry, a later failure: no outcome (it was given at the first)",
      { kind: "retry", why: "disk full", attempt: 2, delayMs: 2000 },
      bare,
      [
        {
          kind: "log",
          level: "warn",
          message: "message kept after a passing failure; trying again",
          fields: { sessionKey: "main", journalId: "a", attempt: 2, retryInMs: 2000, error: "disk full" },
        },
        { kind: "retry", attempt: 2, delayMs: 2000 },
      ],
    ],
    [
      "refused: logged, marked unanswered in the stored session's transcript, nothing sent or ended",
      { kind: "refused" },
      bare,
      [
        {
          kind: "log",
          level: "warn",
          message: "a message was not taken (its journal record could not be made durable); not answered",
          fields: { sessionKey: "main", journalId: "a" },
        },
        {
          kind: "append",
          entries: { kind: "unanswered", items: [a], reason: "not taken" },
          transcript: "stored",
        },
        resolve(a, "aborted", [], "the message was not taken", { sessionKey: "main" }),
      ],
    ],
    [
      "error: logged, told and ended at best effort, the outcome an error",
      { kind: "error", why: "boom", text: "Something went wrong: boom." },
      bare,
      [
        {
          kind: "log",
          level: "error",
          message: "message handling failed unexpectedly",
          fields: { sessionKey: "main", error: "boom" },
        },
        { ...notice("Something went wrong: boom."), bestEffort: true } as Effect,
        { kind: "end", jid: "a", status: "failed-told", reason: "boom", bestEffort: true },
        resolve(a, "error", ["Something went wrong: boom."], "boom", { sessionKey: "main" }),
      ],
    ],
  ];
  it.each(rows)("%s", (_name, s, at, expected) => {
    expect(settlementEffects(s, at, 3)).toEqual(expected);
  });

  it("covers every kind of settlement", () => {
    const kinds = new Set(rows.map(([, s]) => s.kind));
    expect([...kinds].sort()).toEqual(
      [
        "answer",
        "context-kept",
        "drained-resume",
        "drained-tell",
        "error",
        "failed",
        "interrupted",
        "no-model",
        "not-run",
        "parked",
        "quiet-reply",
        "refused",
        "reply",
        "retry",
        "stopped",
      ].sort(),
    );
  });

  it("a settlement before any turn ends only the item's own record: no joined, no parked record", () => {
    const ends = (s: Settlement) =>
      settlementEffects(s, bare, 0).flatMap((e) =>
        e.kind === "end" ? [e.jid] : e.kind === "deliver" ? e.end : [],
      );
    expect(ends({ kind: "reply", text: "x" })).toEqual(["a"]);
    expect(ends({ kind: "failed", result: result({ stopReason: "error" }), text: "x" })).toEqual(["a"]);
  });
});
