import { afterEach, describe, expect, it } from "vitest";
import { appendTranscript, makeHeader, newEntryId, readTranscript } from "../src/sessions/transcript.js";
import type { MessageEntry, StoredChatMessage } from "../src/sessions/types.js";
import { startFakeOpenAI } from "./fakes/openai-server.js";
import { done, startTestGateway, type TestGateway } from "./helpers/gateway-harness.js";

let t: TestGateway | undefined;
afterEach(async () => {
  await t?.close();
  t = undefined;
});

interface HistoryBody {
  sessionKey: string;
  sessionId: string | null;
  messages: { id: string; role: string; text: string; toolCalls?: unknown[]; toolCallId?: string }[];
  badLines: number;
  before: string | null;
  error?: string;
  message?: string;
}

async function history(query: string): Promise<{ status: number; body: HistoryBody }> {
  const address = t?.gateway.listeningAddress();
  if (!address) throw new Error("the gateway does not listen");
  const res = await fetch(`http://${address.host}:${address.port}/api/history${query}`, {
    headers: { authorization: "Bearer test-token-0123456789" },
  });
  return { status: res.status, body: (await res.json()) as HistoryBody };
}

/** A gateway whose `main` transcript holds one real turn plus `extra` messages of assorted roles. */
async function gatewayWithHistory(extra: number): Promise<{ path: string; sessionId: string }> {
  t = await startTestGateway({ listen: true });
  await done(await t.chat.inject({ text: "hello" }));
  const entry = await t.gateway.store.get("main");
  if (!entry) throw new Error("no session");
  const path = t.gateway.store.transcriptPath(entry.sessionId);
  const header = makeHeader(entry.sessionId, "main", new Date());
  const entries: MessageEntry[] = [];
  for (let i = 0; i < extra; i++) {
    const kind = i % 4;
    const message: StoredChatMessage =
      kind === 0
        ? { role: "user", content: `u${i}` }
        : kind === 1
          ? {
              role: "assistant",
              content: null,
              tool_calls: [{ id: `c${i}`, type: "function", function: { name: "bash", arguments: "{}" } }],
            }
          : kind === 2
            ? { role: "tool", content: `r${i}`, tool_call_id: `c${i - 1}` }
            : { role: "system", content: "not shown" };
    entries.push({ type: "message", id: newEntryId(), ts: new Date().toISOString(), message });
  }
  await appendTranscript(path, entries, { header });
  return { path, sessionId: entry.sessionId };
}

/** What the old implementation returned: every non-system message of the whole file, the last `limit`. */
async function oldIds(path: string, limit: number): Promise<string[]> {
  const read = await readTranscript(path);
  return read.entries
    .filter((e) => e.type === "message" && (e as MessageEntry).message.role !== "system")
    .map((e) => e.id)
    .slice(-limit);
}

describe("GET /api/history", () => {
  it("returns the last 200 messages by default, as the whole-file reader did", async () => {
    const { path, sessionId } = await gatewayWithHistory(300);
    const { status, body } = await history("");
    expect(status).toBe(200);
    expect(body.sessionKey).toBe("main");
    expect(body.sessionId).toBe(sessionId);
    expect(body.messages.map((m) => m.id)).toEqual(await oldIds(path, 200));
    expect(body.badLines).toBe(0);
    expect(body.before).toMatch(new RegExp(`^${sessionId}:\\d+$`));
    const call = body.messages.find((m) => m.toolCalls);
    expect(call?.toolCalls).toEqual([{ id: expect.any(String), name: "bash", arguments: "{}" }]);
  });

  it("pages back with before until the start, giving every message once", async () => {
    const { path } = await gatewayWithHistory(30);
    const pages: string[][] = [];
    let query = "?limit=7";
    for (;;) {
      const { status, body } = await history(query);
      expect(status).toBe(200);
      pages.unshift(body.messages.map((m) => m.id));
      if (body.before === null) break;
      query = `?limit=7&before=${encodeURIComponent(body.before)}`;
    }
    expect(pages.flat()).toEqual(await oldIds(path, Number.MAX_SAFE_INTEGER));
    expect(pages.length).toBe(Math.ceil(pages.flat().length / 7));
  });

  it("caps limit at 2000", async () => {
    const { path } = await gatewayWithHistory(2800);
    const { body } = await history("?limit=5000");
    expect(body.messages).toHaveLength(2000);
    expect(body.messages.map((m) => m.id)).toEqual(await oldIds(path, 2000));
  });

  it.each([
    ["?limit=0", /limit must be a whole number from 1 to 2000, got "0"/],
    ["?limit=abc", /limit must be a whole number/],
    ["?limit=-3", /limit must be a whole number/],
    ["?before=nonsense", /before must be the "before" value of an earlier page/],
  ])("answers 400 to %s", async (query, message) => {
    await gatewayWithHistory(2);
    const { status, body } = await history(query);
    expect(status).toBe(400);
    expect(body.error).toBe("bad-request");
    expect(body.message).toMatch(message);
  });

  it("answers 400 to a cursor that is not at a line start, and 409 to one of an earlier session id", async () => {
    const { sessionId } = await gatewayWithHistory(2);
    const mid = await history(`?before=${sessionId}:3`);
    expect(mid.status).toBe(400);
    expect(mid.body.message).toMatch(/not the start of a line/);
    const stale = await history("?before=older-session-id:10");
    expect(stale.status).toBe(409);
    expect(stale.body.error).toBe("stale-cursor");
    expect(stale.body.message).toContain(`main is now ${sessionId}`);
  });

  it("returns no messages for a session that does not exist", async () => {
    t = await startTestGateway({ listen: true });
    expect(await history("?session=group:nobody")).toEqual({
      status: 200,
      body: { sessionKey: "group:nobody", sessionId: null, messages: [], badLines: 0, before: null },
    });
  });
});

describe("GET /api/history: messages that were never answered", () => {
  it("marks a person's message whose turn failed with the reason; answered ones carry no mark", async () => {
    t = await startTestGateway({ listen: true });
    await done(await t.chat.inject({ text: "answered" }));
    t.fake.enqueue({ status: 500 });
    const failed = await done(await t.chat.inject({ text: "this one failed" }));
    expect(failed.stopReason).toBe("error");
    await done(await t.chat.inject({ text: "answered again" }));
    const { status, body } = await history("");
    expect(status).toBe(200);
    const users = body.messages.filter((m) => m.role === "user");
    expect(users.map((m) => [m.text, (m as { unanswered?: string }).unanswered])).toEqual([
      ["answered", undefined],
      ["this one failed", failed.error],
      ["answered again", undefined],
    ]);
    expect(failed.error).toBeTruthy();
  });

  it("with no model configured: unanswered, 'no model configured'", async () => {
    // An endpoint that lists several models: none is picked for the gateway.
    const fake = await startFakeOpenAI();
    fake.models.splice(0, fake.models.length, "model-a", "model-b");
    t = await startTestGateway({ listen: true, model: null, fake });
    await done(await t.chat.inject({ text: "anyone there?" }));
    const { body } = await history("");
    expect(body.messages.map((m) => [m.text, (m as { unanswered?: string }).unanswered])).toEqual([
      ["anyone there?", "no model configured"],
    ]);
    await fake.close();
  });
});
