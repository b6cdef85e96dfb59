import { describe, expect, it } from "vitest";
import type { StoredChatMessage } from "../sessions/types.js";
import {
  clearedPlaceholder,
  cutStart,
  extractiveNotes,
  NOTES_PREFIX,
  needsCompaction,
  planCompaction,
} from "./plan-compaction.js";

const user = (content: string): StoredChatMessage => ({ role: "user", content });
const answer = (content: string): StoredChatMessage => ({ role: "assistant", content });
const calls = (...ids: string[]): StoredChatMessage => ({
  role: "assistant",
  content: null,
  tool_calls: ids.map((id) => ({ id, type: "function", function: { name: `tool_${id}`, arguments: "{}" } })),
});
const result = (id: string, content = `out ${id}`): StoredChatMessage => ({
  role: "tool",
  tool_call_id: id,
  content,
});
const budget = { window: 100_000, threshold: 0.75, keepRecentToolResults: 3, keepRecentMessages: 6 };

describe("needsCompaction", () => {
  it.each([
    [75_000, false],
    [75_001, true],
  ])("%d input tokens of 100k at 0.75 → %s", (tokens, expected) => {
    expect(needsCompaction(tokens, budget)).toBe(expected);
  });
});

describe("planCompaction", () => {
  it("clears old tool results (keeping the newest 3), keeps the newest 6 messages and the system prompt", () => {
    const messages: StoredChatMessage[] = [
      { role: "system", content: "sys" },
      user("u1"),
      calls("a", "b"),
      result("a"),
      result("b"),
      user("u2"),
      calls("c", "d"),
      result("c"),
      result("d"),
      answer("done"),
    ];
    const plan = planCompaction(messages, budget);
    expect(plan.head).toEqual([{ role: "system", content: "sys" }]);
    expect(plan.clearedToolResults).toBe(1);
    // The newest 6 start on result "b": moved back to the call that made it.
    expect(plan.kept.map((m) => m.content ?? "calls")).toEqual([
      "calls",
      clearedPlaceholder("tool_a", "a"),
      "out b",
      "u2",
      "calls",
      "out c",
      "out d",
      "done",
    ]);
    expect(plan.dropped).toEqual([user("u1")]);
  });

  it("halves the keep count while over half the window, down to 2", () => {
    const big = "x".repeat(40_000); // ~10k tokens each
    const messages = [user(big), answer(big), user(big), answer(big), user(big), answer("short")];
    const plan = planCompaction(messages, { ...budget, window: 40_000 });
    expect(plan.keepCount).toBe(2);
    expect(plan.kept).toEqual([user(big), answer("short")]);
    const roomy = planCompaction(messages, { ...budget, window: 1_000_000 });
    expect(roomy.keepCount).toBe(6);
  });

  it("never starts on a tool result, even when the cut lands inside a batch", () => {
    const body = [user("u"), calls("a", "b", "c"), result("a"), result("b"), result("c")];
    expect(cutStart(body, 2)).toBe(1);
    const orphan = [result("z"), user("u")];
    expect(cutStart(orphan, 2)).toBe(1);
  });

  it("extractive notes: what the person said in the dropped part, and earlier notes", () => {
    const notes = extractiveNotes([
      user(`${NOTES_PREFIX}\nthey like tea`),
      user("my cat is called Tom"),
      answer("nice"),
    ]);
    expect(notes).toContain("they like tea");
    expect(notes).toContain("- my cat is called Tom");
    expect(notes).not.toContain("nice");
    expect(extractiveNotes([answer("x")])).toBe("");
  });
});

/** A seeded generator (mulberry32): the property test replays the same transcripts on every run. */
function random(seed: number): () => number {
  let a = seed;
  return () => {
    a = (a + 0x6d2b79f5) | 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

function randomTranscript(next: () => number): StoredChatMessage[] {
  const out: StoredChatMessage[] = [{ role: "system", content: "sys" }];
  const steps = 1 + Math.floor(next() * 40);
  let id = 0;
  for (let i = 0; i < steps; i++) {
    const r = next();
    const size = "y".repeat(Math.floor(next() * 4000));
    if (r < 0.35) out.push(user(`u${i}${size}`));
    else if (r < 0.55) out.push(answer(`a${i}${size}`));
    else {
      const n = 1 + Math.floor(next() * 4);
      const ids = Array.from({ length: n }, () => `c${id++}`);
      out.push(calls(...ids));
      for (const c of ids) out.push(result(c, `r${size}`));
    }
  }
  return out;
}

/** Every tool result has its call before it, and every call its results right after it. */
function paired(messages: StoredChatMessage[]): boolean {
  for (let i = 0; i < messages.length; i++) {
    const m = messages[i] as StoredChatMessage;
    if (m.role === "tool") {
      let j = i - 1;
      while (j >= 0 && messages[j]?.role === "tool") j--;
      const owner = messages[j];
      if (!owner?.tool_calls?.some((c) => c.id === m.tool_call_id)) return false;
    }
    if (m.tool_calls) {
      const ids = messages.slice(i + 1, i + 1 + m.tool_calls.length).map((r) => r.tool_call_id);
      if (ids.join(",") !== m.tool_calls.map((c) => c.id).join(",")) return false;
    }
  }
  return true;
}

describe("planCompaction: property", () => {
  it("over 500 random transcripts and budgets, every kept tool result has its call and every call its result", () => {
    const next = random(20260101);
    for (let n = 0; n < 500; n++) {
      const messages = randomTranscript(next);
      const b = {
        window: 1000 + Math.floor(next() * 60_000),
        threshold: 0.75,
        keepRecentToolResults: Math.floor(next() * 5),
        keepRecentMessages: 1 + Math.floor(next() * 10),
      };
      const plan = planCompaction(messages, b);
      expect(paired(plan.kept), `transcript ${n}`).toBe(true);
      expect(plan.kept[0]?.role, `transcript ${n}`).not.toBe("tool");
      expect([...plan.head, ...plan.dropped, ...plan.kept].length).toBe(messages.length);
    }
  });
});
