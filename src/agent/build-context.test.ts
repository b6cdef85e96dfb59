import { describe, expect, it } from "vitest";
import type { MessageEntry, TranscriptEntry } from "../sessions/types.js";
import { buildContext, pairToolCalls, SCAN_KEPT_FROM } from "./build-context.js";
import { knownChars, messageChars } from "./estimate-tokens.js";

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

describe("buildContext after an automated turn a person ended", () => {
  it("puts the note where the turn-interrupted entry is, before the person's message", () => {
    const entries: TranscriptEntry[] = [
      { type: "message", id: "1", ts, message: { role: "user", content: "build failed" } },
      {
        type: "message",
        id: "2",
        ts,
        message: {
          role: "assistant",
          content: null,
          tool_calls: [{ id: "c1", type: "function", function: { name: "bash", arguments: "{}" } }],
        },
      },
      { type: "message", id: "3", ts, message: { role: "tool", tool_call_id: "c1", content: "log" } },
      { type: "turn-interrupted", id: "4", ts, journalId: "j1", note: "[stopped unfinished]" },
      { type: "message", id: "5", ts, message: { role: "user", content: "hi" } },
    ];
    const messages = buildContext({ systemPrompt: "s", entries });
    expect(messages.slice(3).map((m) => `${m.role}:${m.content}`)).toEqual([
      "tool:log",
      "user:[stopped unfinished]",
      "user:hi",
    ]);
    // The same object in every context built from the same entry.
    expect(buildContext({ systemPrompt: "s", entries })[4]).toBe(messages[4]);
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

describe("buildContext in direct chats shared by more than one person", () => {
  const dm = (id: string, content: string, meta: MessageEntry["meta"]): MessageEntry => ({
    type: "message",
    id,
    ts,
    message: { role: "user", content },
    meta: { channel: "telegram", chatType: "direct", ...meta },
  });
  const reply = (id: string): TranscriptEntry => ({
    type: "message",
    id,
    ts,
    message: { role: "assistant", content: "ok" },
  });
  const sent = (entries: TranscriptEntry[]) =>
    buildContext({ systemPrompt: "s", entries })
      .filter((m) => m.role === "user")
      .map((m) => m.content);

  it("one person alone, on one app: no names", () => {
    const ann = { senderId: "111", senderName: "Ann" };
    expect(sent([dm("1", "hi", ann), reply("2"), dm("3", "again", ann)])).toEqual(["hi", "again"]);
  });

  it("two senders of one app: every direct message carries its sender's name, the earlier ones too", () => {
    const entries = [
      dm("1", "hi", { senderId: "111", senderName: "Ann" }),
      reply("2"),
      dm("3", "me too", { senderId: "222" }),
    ];
    expect(sent(entries)).toEqual(["Ann: hi", "222: me too"]);
    // The same objects in every context built from the same entries (request-body.ts reuses their bytes).
    const again = buildContext({ systemPrompt: "s", entries });
    expect(again[1]).toBe(buildContext({ systemPrompt: "s", entries })[1]);
  });

  it("a tail that grows turn by turn: a second person later labels every message, earlier ones too", () => {
    const ann = dm("1", "hi", { senderId: "111", senderName: "Ann" });
    const tail: TranscriptEntry[] = [ann, reply("2")];
    expect(sent(tail)).toEqual(["hi"]);
    tail.push(dm("3", "again", { senderId: "111", senderName: "Ann" }));
    expect(sent(tail)).toEqual(["hi", "again"]);
    tail.push(dm("4", "me too", { senderId: "222", senderName: "Bo" }));
    expect(sent(tail)).toEqual(["Ann: hi", "Ann: again", "Bo: me too"]);
    // A tail that begins with the same entry but holds others after it is looked at afresh.
    expect(sent([ann, dm("5", "alone", { senderId: "111", senderName: "Ann" })])).toEqual(["hi", "alone"]);
    const cy = dm("7", "other", { senderId: "333", senderName: "Cy" });
    expect(sent([ann, cy, dm("8", "more", { senderId: "111", senderName: "Ann" })])).toEqual([
      "Ann: hi",
      "Cy: other",
      "Ann: more",
    ]);
  });

  it("the same id on two apps is two identities; every local client is one (the owner)", () => {
    const local = (id: string, channel: string) =>
      dm(id, `from ${channel}`, { channel, senderId: "local", senderName: "owner" });
    expect(sent([local("1", "webchat"), local("2", "cli")])).toEqual(["from webchat", "from cli"]);
    expect(
      sent([local("1", "webchat"), dm("2", "from telegram", { senderId: "111", senderName: "Ann" })]),
    ).toEqual(["owner: from webchat", "Ann: from telegram"]);
    expect(
      sent([
        dm("1", "a", { channel: "telegram", senderId: "7" }),
        dm("2", "b", { channel: "whatsapp", senderId: "7" }),
      ]),
    ).toEqual(["7: a", "7: b"]);
  });

  it("automated input and group messages neither count nor change", () => {
    const entries = [
      dm("1", "hi", { senderId: "111", senderName: "Ann" }),
      dm("2", "build failed", { channel: "webhook", senderId: "ci", automated: true }),
      dm("3", "in the group", { senderId: "222", senderName: "Bob", chatType: "group" }),
    ];
    expect(sent(entries)).toEqual(["hi", "build failed", "Bob: in the group"]);
  });
});

describe("buildContext on a tail that grows turn by turn (the kept build)", () => {
  /** A small deterministic generator (mulberry32), so a failing sequence can be replayed by its seed. */
  const random = (seed: number) => () => {
    seed = (seed + 0x6d2b79f5) | 0;
    let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  const entryOf = (next: () => number, n: number, jids: string[]): TranscriptEntry => {
    const id = `e${n}`;
    const pick = next();
    const sender = ["111", "222"][Math.floor(next() * (next() < 0.9 ? 1 : 2))] as string;
    if (pick < 0.3) {
      const jid = `j${n}`;
      jids.push(jid);
      const group = next() < 0.5;
      return {
        type: "message",
        id,
        ts,
        message: { role: "user", content: `m${n}` },
        meta: { channel: "telegram", chatType: group ? "group" : "direct", senderId: sender, journalId: jid },
      };
    }
    if (pick < 0.55) return { type: "message", id, ts, message: { role: "assistant", content: `a${n}` } };
    if (pick < 0.75)
      return { type: "group-context", id, ts, senderId: sender, text: `g${n}` } as TranscriptEntry;
    if (pick < 0.8 && jids.length > 0)
      return {
        type: "turn-failed",
        id,
        ts,
        journalId: jids[Math.floor(next() * jids.length)],
      } as TranscriptEntry;
    if (pick < 0.83) return { type: "turn-interrupted", id, ts, note: `stopped ${n}` } as TranscriptEntry;
    if (pick < 0.9)
      return {
        type: "message",
        id,
        ts,
        message: {
          role: "assistant",
          content: null,
          tool_calls: [{ id: `c${n}`, type: "function", function: { name: "bash", arguments: "{}" } }],
        },
      };
    if (pick < 0.95)
      return {
        type: "message",
        id,
        ts,
        message: { role: "tool", tool_call_id: `c${n - 1}`, content: "out" },
      };
    return { type: "event", id, ts, what: "other" } as TranscriptEntry;
  };

  it("gives what a fresh build of the same entries gives, at every length, for many tails", () => {
    let counted = 0;
    for (let seed = 1; seed <= 16; seed++) {
      const next = random(seed);
      const jids: string[] = [];
      const tail: TranscriptEntry[] = [];
      for (let n = 0; n < 80; n++) {
        // A turn appends one to four entries, then the context is built from the tail as it is.
        const adding = 1 + Math.floor(next() * 4);
        for (let k = 0; k < adding; k++) tail.push(entryOf(next, tail.length, jids));
        const kept = buildContext({ systemPrompt: "s", entries: tail, groupHistoryLimit: 3 });
        // Copies of the entries: another first entry, so nothing kept is used.
        const fresh = buildContext({
          systemPrompt: "s",
          entries: structuredClone(tail),
          groupHistoryLimit: 3,
        });
        expect(kept, `seed ${seed}, ${tail.length} entries`).toEqual(fresh);
        // What the build counted for the turn's first token estimate (contexts without tool calls).
        const chars = knownChars(kept);
        if (chars !== undefined) {
          counted++;
          expect(chars).toBe(kept.reduce((sum, m) => sum + messageChars(m), 0));
        }
      }
    }
    expect(counted).toBeGreaterThan(20);
  });

  it("goes on from the kept build: a message already shown is the same object in the next turn's context", () => {
    const group = (n: number): MessageEntry => ({
      type: "message",
      id: `m${n}`,
      ts,
      message: { role: "user", content: `q${n}` },
      meta: { channel: "telegram", chatType: "group", senderId: "111", senderName: "Ann" },
    });
    const tail: TranscriptEntry[] = Array.from({ length: SCAN_KEPT_FROM }, (_, n) => group(n));
    const first = buildContext({ systemPrompt: "s", entries: tail });
    tail.push({ type: "group-context", id: "g", ts, senderId: "222", text: "aside" } as TranscriptEntry);
    const second = buildContext({ systemPrompt: "s", entries: tail });
    expect(second.at(-1)?.content).toContain("222: aside");
    tail.push({ type: "group-context", id: "g2", ts, senderId: "333", text: "more" } as TranscriptEntry);
    tail.push(group(99));
    const third = buildContext({ systemPrompt: "s", entries: tail });
    // The run of two asides is one message before the new question; the earlier messages are those of before.
    expect(third.slice(-2).map((m) => m.content)).toEqual([
      "[Messages in the group that were not addressed to you; for context, no answer needed]\n222: aside\n333: more",
      "Ann: q99",
    ]);
    expect(third[5]).toBe(first[5]);
    // Each call gives its own array: a caller that adds to it changes no later context.
    third.push({ role: "user", content: "added by a caller" });
    expect(buildContext({ systemPrompt: "s", entries: tail }).at(-1)?.content).toBe("Ann: q99");
    // Another system prompt is a fresh build.
    expect(buildContext({ systemPrompt: "other", entries: tail })[0]?.content).toBe("other");
    // A tail with the same first entry but other entries after it (a slide, a rewrite) is a fresh build too.
    buildContext({ systemPrompt: "s", entries: tail });
    const longer = [...tail.slice(0, -1), group(7777), group(7778)];
    expect(
      buildContext({ systemPrompt: "s", entries: longer })
        .slice(-2)
        .map((m) => m.content),
    ).toEqual(["Ann: q7777", "Ann: q7778"]);
    const shorter = [...tail.slice(0, SCAN_KEPT_FROM - 1), group(7779)];
    expect(buildContext({ systemPrompt: "s", entries: shorter }).at(-1)?.content).toBe("Ann: q7779");
    expect(buildContext({ systemPrompt: "s", entries: shorter })).toHaveLength(SCAN_KEPT_FROM + 1);
  });

  it("pairs a tool call that came in a later turn with its stand-in result", () => {
    const tail: TranscriptEntry[] = Array.from({ length: SCAN_KEPT_FROM }, (_, n) => ({
      type: "message" as const,
      id: `m${n}`,
      ts,
      message: { role: "assistant" as const, content: `a${n}` },
    }));
    buildContext({ systemPrompt: "s", entries: tail });
    tail.push({
      type: "message",
      id: "call",
      ts,
      message: {
        role: "assistant",
        content: null,
        tool_calls: [{ id: "c1", type: "function", function: { name: "bash", arguments: "{}" } }],
      },
    });
    expect(buildContext({ systemPrompt: "s", entries: tail }).at(-1)).toEqual({
      role: "tool",
      tool_call_id: "c1",
      content: "(no result: the turn was interrupted)",
    });
  });
});
