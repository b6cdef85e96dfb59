import { existsSync } from "node:fs";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  type AgentReply,
  cleanupAll,
  contentOf,
  E2eState,
  type GatewayProcess,
  type HttpAnswer,
} from "./harness.js";

/**
 * The real `clawdis gateway` on one state dir, shared by these tests (they run in order and only ever look at
 * what changed since they began): chats from every app land in `main`, and the chat commands work end to end.
 */
describe("e2e: one session across apps, chat commands", () => {
  let state: E2eState;
  let gw: GatewayProcess;

  beforeAll(async () => {
    state = await E2eState.create();
    gw = await state.startGateway();
  });
  afterAll(cleanupAll);

  const mainId = async () => (await state.readStore()).main?.sessionId ?? "";
  const ok = (answer: HttpAnswer<AgentReply>) => {
    expect(answer.status, JSON.stringify(answer.body)).toBe(200);
    return answer.body;
  };

  it("puts the web chat, the terminal chat and `clawdis agent` in session main, in one transcript", async () => {
    const web = ok(await gw.agent("hello from the web chat"));
    expect(web.payloads).toEqual([{ text: "echo: hello from the web chat" }]);
    expect(web.meta).toMatchObject({ sessionKey: "main", stopReason: "end", model: "fake-model" });

    const chat = state.spawn(["chat"]);
    chat.write("hello from the terminal");
    await chat.stdout.waitFor("echo: hello from the terminal");
    chat.write("/quit");
    expect((await chat.waitForExit()).code).toBe(0);

    const agent = await state.cli(["agent", "-m", "hello from the cli", "--json"]);
    expect(agent.code, agent.stderr).toBe(0);
    const reply = JSON.parse(agent.stdout) as AgentReply;
    expect(reply.payloads).toEqual([{ text: "echo: hello from the cli" }]);
    expect(reply.meta).toMatchObject({ model: "fake-model", stopReason: "end", sessionKey: "main" });
    expect(typeof reply.meta.durationMs).toBe("number");
    expect(reply.meta.usage).toEqual(expect.any(Object));

    const sessions = await state.cli(["sessions", "--json"]);
    expect(sessions.code, sessions.stderr).toBe(0);
    const report = JSON.parse(sessions.stdout) as {
      count: number;
      sessions: { key: string; sessionId: string; phase?: string }[];
    };
    expect(report.count).toBe(1);
    expect(report.sessions.map((s) => s.key)).toEqual(["main"]);
    // The running gateway holds main loaded, its turns over: the listing asked it for the phase.
    expect(report.sessions[0]?.phase).toBe("ready");
    const sessionId = report.sessions[0]?.sessionId ?? "";
    expect(sessionId).toBe(web.meta.sessionId);
    expect(reply.meta.sessionId).toBe(sessionId);

    const users = (await state.messages(sessionId)).filter((m) => m.message.role === "user");
    expect(users.map((m) => [contentOf(m), m.meta?.channel])).toEqual([
      ["hello from the web chat", "webchat"],
      ["hello from the terminal", "terminal"],
      ["hello from the cli", "cli"],
    ]);
    // One memory: the model saw the web chat and the terminal when it answered the CLI.
    const last = state.fake.requests.at(-1)?.body.messages.map((m) => m.content);
    expect(last).toEqual(
      expect.arrayContaining(["hello from the web chat", "echo: hello from the terminal"]),
    );
  });

  it("runs a bash tool call and keeps the call, its result and the answer in the transcript", async () => {
    const before = state.fake.requests.length;
    state.fake.enqueue(
      { toolCalls: [{ name: "bash", arguments: { command: "echo e2e-tool-ok" }, id: "call_e2e_1" }] },
      { text: "The command printed e2e-tool-ok." },
    );
    const answer = ok(await gw.agent("please run the echo command"));
    expect(answer.payloads).toEqual([{ text: "The command printed e2e-tool-ok." }]);
    expect(state.fake.requests.length).toBe(before + 2);

    const messages = await state.messages(answer.meta.sessionId);
    const start = messages.findIndex((m) => contentOf(m) === "please run the echo command");
    const turn = messages.slice(start + 1).map((m) => m.message);
    expect(turn).toHaveLength(3);
    expect(turn[0]).toMatchObject({
      role: "assistant",
      tool_calls: [{ id: "call_e2e_1", function: { name: "bash" } }],
    });
    expect(JSON.parse(turn[0]?.tool_calls?.[0]?.function.arguments ?? "{}")).toEqual({
      command: "echo e2e-tool-ok",
    });
    expect(turn[1]).toMatchObject({ role: "tool", tool_call_id: "call_e2e_1" });
    expect(turn[1]?.content).toContain("e2e-tool-ok");
    expect(turn[2]).toMatchObject({ role: "assistant", content: "The command printed e2e-tool-ok." });
    // The model got the tool's output back.
    const second = state.fake.requests[before + 1]?.body.messages.at(-1);
    expect(second).toMatchObject({ role: "tool", tool_call_id: "call_e2e_1" });
    expect(String(second?.content)).toContain("e2e-tool-ok");
  });

  it("/think high is kept on the session entry and confirmed in one line, without the model", async () => {
    const before = state.fake.requests.length;
    const answer = ok(await gw.agent("/think high"));
    expect(answer.payloads).toHaveLength(1);
    expect(answer.payloads[0]?.text).toMatch(/high/i);
    expect(answer.payloads[0]?.text).not.toContain("\n");
    expect(state.fake.requests.length).toBe(before);
    expect((await state.readStore()).main?.thinkingLevel).toBe("high");

    ok(await gw.agent("think hard about this"));
    expect(state.fake.requests[before]?.body.reasoning_effort).toBe("high");
    expect((await state.readStore()).main?.thinkingLevel).toBe("high");
  });

  it("/status answers at once during a running turn, without a model request", async () => {
    const before = state.fake.requests.length;
    state.fake.hold();
    state.fake.enqueue({ hang: "before-headers", text: "the slow answer" });
    const slow = gw.agent("a slow question");
    await state.fake.waitForRequest(before + 1);

    const status = ok(await gw.agent("/status"));
    expect(state.fake.requests.length).toBe(before + 1);
    expect(status.meta.stopReason).toBe("command");
    const text = status.payloads.map((p) => p.text).join("\n");
    expect(text).toContain("main");
    expect(text).toContain("fake-model");
    expect(text).toMatch(/echo-transport ok/);
    expect(text).toMatch(/context/i);
    expect(text).toMatch(/running/i);

    state.fake.release();
    expect(ok(await slow).payloads).toEqual([{ text: "the slow answer" }]);
    state.fake.hold();
  });

  it("/stop really aborts the running turn and says Stopped.", async () => {
    const before = state.fake.requests.length;
    state.fake.enqueue({ hang: "before-headers", text: "never sent" });
    const long = gw.agent("count to a million");
    await state.fake.waitForRequest(before + 1);

    const stop = ok(await gw.agent("/stop"));
    expect(stop.payloads).toEqual([{ text: "Stopped." }]);
    await state.fake.waitForAbort(before + 1);
    const aborted = (await long).body;
    expect(aborted.meta.stopReason).toBe("aborted");
    expect(aborted.payloads.map((p) => p.text)).not.toContain("never sent");

    // The session is ready for the next message.
    expect(ok(await gw.agent("are you there?")).payloads).toEqual([{ text: "echo: are you there?" }]);
  });

  it("/new starts a new sessionId (no model call, old transcript kept); /new <text> answers the text there", async () => {
    const oldId = await mainId();
    const before = state.fake.requests.length;
    const bare = ok(await gw.agent("/new"));
    expect(bare.payloads).toHaveLength(1);
    expect(bare.payloads[0]?.text).toMatch(/new session/i);
    expect(state.fake.requests.length).toBe(before);
    const bareId = await mainId();
    expect(bareId).not.toBe(oldId);
    expect(existsSync(state.transcriptPath(oldId))).toBe(true);

    const withText = ok(await gw.agent("/new Tell Me  Something"));
    expect(withText.payloads).toEqual([{ text: "echo: Tell Me  Something" }]);
    const newId = await mainId();
    expect(newId).not.toBe(oldId);
    expect(newId).not.toBe(bareId);
    expect(withText.meta.sessionId).toBe(newId);
    const messages = await state.messages(newId);
    expect(messages.map((m) => [m.message.role, contentOf(m)])).toEqual([
      ["user", "Tell Me  Something"],
      ["assistant", "echo: Tell Me  Something"],
    ]);
    // The new session starts with an empty memory.
    const request = state.fake.requests.at(-1)?.body.messages.map((m) => m.content);
    expect(request).not.toContain("hello from the web chat");
  });

  /** Hand-edits sessions.json as a person would: main's last exchange two hours ago. */
  async function ageMain(): Promise<string> {
    // The last turn's store update follows its reply: the edit below is not raced by it (a person edits later).
    await gw.storeSettled();
    const store = await state.readStore();
    const main = store.main;
    if (!main) throw new Error("no main session to age");
    const twoHoursAgo = Date.now() - 2 * 60 * 60 * 1000;
    await state.writeStore({
      ...store,
      main: { ...main, lastInteractionAt: twoHoursAgo, updatedAt: twoHoursAgo },
    });
    return main.sessionId;
  }

  it("idle expiry via a transport: after a hand edit, the next message starts a new session, with a note first", async () => {
    const oldId = await ageMain();
    const answer = await gw.echo(
      { chatId: "chat-idle", senderId: "alice", text: "good morning" },
      { wait: true },
    );
    expect(answer.status).toBe(200);
    const newId = await mainId();
    expect(newId).not.toBe(oldId);
    const sent = (await gw.outbox()).filter((o) => o.chatId === "chat-idle");
    expect(sent.map((o) => o.kind)).toEqual(["notice", "reply"]);
    expect(sent[0]?.text).toMatch(/new session/i);
    expect(sent[0]?.text).not.toContain("\n");
    expect(sent[1]?.text).toBe("echo: good morning");
    expect((await state.messages(newId)).map(contentOf)).toEqual(["good morning", "echo: good morning"]);
  });

  it("idle expiry via the web chat: the new-session note reaches the web chat before the reply", async () => {
    const oldId = await ageMain();
    const events = await gw.events("main");
    try {
      const answer = ok(await gw.agent("back again"));
      const newId = await mainId();
      expect(newId).not.toBe(oldId);
      expect(answer.meta.sessionId).toBe(newId);
      expect(answer.payloads.at(-1)).toEqual({ text: "echo: back again" });
      // The note either comes as a payload before the reply or as a `notice` event before the reply's `message`
      // event (docs/http-api.md). Events arrive in order on one connection: wait for the reply's, then look back.
      const inPayloads = answer.payloads.slice(0, -1).some((p) => /new session/i.test(p.text));
      const reply = await events.waitFor(
        (e) => e.type === "message" && e.data.role === "assistant",
        "the reply",
      );
      const before = events.events.slice(0, events.events.indexOf(reply));
      const inEvents = before.some((e) => e.type === "notice" && /new session/i.test(String(e.data.text)));
      expect(
        inPayloads || inEvents,
        `no new-session note in payloads ${JSON.stringify(answer.payloads)} or events ${events.describe()}`,
      ).toBe(true);
    } finally {
      events.close();
    }
  });
});
