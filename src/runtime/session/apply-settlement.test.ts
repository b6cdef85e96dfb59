import { mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { TurnResult } from "../../agent/run-turn.js";
import { ManualClock } from "../../core/clock.js";
import { createLogger } from "../../core/logger.js";
import type { TurnOutcome } from "../../plugin-api/types.js";
import { makeHeader } from "../../sessions/transcript.js";
import type { Delivery } from "../outbox.js";
import type { WorkItem } from "../work-item.js";
import { applySettlement } from "./apply-settlement.js";
import type { SessionPorts } from "./ports.js";
import { SessionTranscript } from "./session-transcript.js";
import type { Settlement } from "./settlement.js";
import type { SettleTarget } from "./settlement-effects.js";

/** What the one place did: deliveries, journal ends, outcomes, retries, transcript lines. */
interface Effects {
  delivered: Delivery[];
  ended: { jid: string; outcome: string; reason?: string }[];
  outcomes: Record<string, TurnOutcome>;
  retried: { jid: string; attempt?: number; delayMs: number }[];
}

let dir: string;
let effects: Effects;
let ports: SessionPorts;
const open = new Set<string>();

beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), "apply-settlement-"));
  effects = { delivered: [], ended: [], outcomes: {}, retried: [] };
  open.clear();
  const fake = {
    runtime: {
      clock: new ManualClock(),
      logger: createLogger({ level: "error", sink: () => {} }),
    },
    delivery: {
      events: { emit: () => {} },
      outbox: { enqueue: async (d: Delivery) => void effects.delivered.push(d) },
    },
    storage: {
      journal: {
        end: async (jid: string, outcome: string, _now: number, reason?: string) => {
          effects.ended.push({ jid, outcome, ...(reason ? { reason } : {}) });
        },
        get: (jid: string) => (open.has(jid) ? { jid } : undefined),
      },
      store: {
        get: async () => ({ sessionId: "s1" }),
        transcriptPath: (id: string) => join(dir, `${id}.jsonl`),
      },
    },
    queue: {
      retryLater: (item: WorkItem, delayMs: number) =>
        effects.retried.push({ jid: item.jid, attempt: item.attempt, delayMs }),
    },
  };
  ports = fake as unknown as SessionPorts;
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

const item = (jid: string, local = false): WorkItem => ({
  jid,
  local,
  text: "hi",
  sessionKey: "main",
  message: {
    channel: "telegram",
    chatId: "c1",
    chatType: "direct",
    senderId: "u1",
    messageId: `m-${jid}`,
    text: "hi",
    receivedAt: Date.UTC(2026, 0, 1),
  },
  resolve: (outcome) => {
    effects.outcomes[jid] = outcome;
  },
});
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
const target = (first: WorkItem, joined: WorkItem[] = []): SettleTarget => ({
  key: "main",
  item: first,
  joined,
  ids: { sessionKey: "main", sessionId: "s1" },
  attachments: [],
  transcript: new SessionTranscript(ports, join(dir, "s1.jsonl"), makeHeader("s1", "main", new Date(0))),
});
const lines = async () =>
  (await readFile(join(dir, "s1.jsonl"), "utf8").catch(() => ""))
    .split("\n")
    .filter((l) => l.length > 0)
    .map((l) => JSON.parse(l) as { type: string; journalId?: string; reason?: string });
const stops = () =>
  Object.fromEntries(Object.entries(effects.outcomes).map(([jid, o]) => [jid, o.stopReason]));

describe("applySettlement", () => {
  it("reply: one delivery ends the item's and the joined records (by the outbox); every outcome is `end`", async () => {
    await applySettlement(
      ports,
      { kind: "reply", text: "answer", result: result() },
      target(item("a"), [item("b")]),
    );
    expect(effects.delivered.map((d) => [d.kind, d.text, d.jid, d.alsoEnd])).toEqual([
      ["reply", "answer", "a", ["b"]],
    ]);
    expect(effects.ended).toEqual([]);
    expect(stops()).toEqual({ a: "end", b: "end" });
  });

  it("reply to a local item: its open records end here, the joined one answered with the first", async () => {
    open.add("a").add("b");
    await applySettlement(
      ports,
      { kind: "reply", text: "answer", result: result() },
      target(item("a", true), [item("b")]),
    );
    expect(effects.delivered).toEqual([]);
    expect(effects.ended).toEqual([
      { jid: "a", outcome: "replied" },
      { jid: "b", outcome: "replied", reason: "answered with a" },
    ]);
  });

  it("drained: the person is told, only the joined records end, the item's stays open", async () => {
    const s: Settlement = {
      kind: "drained-resume",
      text: "The gateway is stopping; your message will be answered after it restarts.",
      mode: "stopping",
      decision: {
        action: "resume",
        why: "after a tool batch",
        results: [
          { callId: "c1", name: "bash", content: "Not run: the gateway stopped before this call ran." },
        ],
      },
    };
    await applySettlement(ports, s, target(item("a"), [item("b")]));
    expect(effects.delivered.map((d) => [d.kind, d.jid])).toEqual([["notice", undefined]]);
    expect(effects.ended).toEqual([{ jid: "b", outcome: "replied", reason: "joined a, which resumes" }]);
    expect(stops()).toEqual({ a: "aborted", b: "aborted" });
    expect((await lines()).map((l) => l.type)).toEqual(["session", "message"]);
  });

  it("failed: told once, every message marked unanswered, every record ends failed-told", async () => {
    const failed = result({ stopReason: "timeout", error: "the model did not answer" });
    await applySettlement(
      ports,
      { kind: "failed", result: failed, text: "⚠️ late" },
      target(item("a"), [item("b")]),
    );
    expect(effects.delivered.map((d) => d.text)).toEqual(["⚠️ late"]);
    expect((await lines()).filter((l) => l.type === "turn-failed").map((l) => l.journalId)).toEqual([
      "a",
      "b",
    ]);
    expect(effects.ended).toEqual([
      { jid: "a", outcome: "failed-told", reason: "the model did not answer" },
      { jid: "b", outcome: "failed-told", reason: "the model did not answer" },
    ]);
    expect(stops()).toEqual({ a: "timeout", b: "timeout" });
  });

  it("stopped: nobody told, nothing marked, the records end", async () => {
    await applySettlement(
      ports,
      { kind: "stopped", result: result({ stopReason: "aborted" }) },
      target(item("a")),
    );
    expect(effects.delivered).toEqual([]);
    expect(await lines()).toEqual([]);
    expect(effects.ended).toEqual([{ jid: "a", outcome: "failed-told", reason: "aborted" }]);
    expect(stops()).toEqual({ a: "aborted" });
  });

  it("retry: runs again later, record open; the outcome is given at the first failure only", async () => {
    await applySettlement(
      ports,
      { kind: "retry", why: "disk full", attempt: 1, delayMs: 1000 },
      target(item("a")),
    );
    await applySettlement(
      ports,
      { kind: "retry", why: "disk full", attempt: 2, delayMs: 2000 },
      target(item("b")),
    );
    expect(effects.retried).toEqual([
      { jid: "a", attempt: 1, delayMs: 1000 },
      { jid: "b", attempt: 2, delayMs: 2000 },
    ]);
    expect(effects.ended).toEqual([]);
    expect(stops()).toEqual({ a: "error" });
  });

  it("refused: nothing sent or ended; the message's line is marked unanswered", async () => {
    await applySettlement(ports, { kind: "refused" }, { key: "main", item: item("a") });
    expect(effects.delivered).toEqual([]);
    expect(effects.ended).toEqual([]);
    expect((await lines()).filter((l) => l.type === "turn-failed").map((l) => l.reason)).toEqual([
      "not taken",
    ]);
    expect(stops()).toEqual({ a: "aborted" });
  });

  it("answer: sent as a notice that ends its record; the outcome carries the session it names", async () => {
    await applySettlement(
      ports,
      { kind: "answer", text: "Stopped.", extra: { sessionId: "s1" } },
      { key: "main", item: item("a") },
    );
    expect(effects.delivered.map((d) => [d.kind, d.text, d.jid])).toEqual([["notice", "Stopped.", "a"]]);
    expect(effects.outcomes.a?.sessionId).toBe("s1");
    expect(stops()).toEqual({ a: "command" });
  });

  it("context kept: a group-context entry, the record ends filtered, no delivery", async () => {
    await applySettlement(ports, { kind: "context-kept", at: 0 }, target(item("a")));
    expect((await lines()).map((l) => l.type)).toEqual(["session", "group-context"]);
    expect(effects.ended).toEqual([
      { jid: "a", outcome: "filtered", reason: "not addressed: kept as group context" },
    ]);
    expect(effects.delivered).toEqual([]);
    expect(stops()).toEqual({ a: "filtered" });
  });
});
