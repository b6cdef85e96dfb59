import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { definePlugin, PLUGIN_API_VERSION } from "../src/plugin-api/index.js";
import { startFakeOpenAI } from "./fakes/openai-server.js";
import { done, startTestGateway, type TestGateway } from "./helpers/gateway-harness.js";

describe("gateway: sessions at work", () => {
  let t: TestGateway;
  afterEach(async () => {
    await t?.close();
  });

  it("answers a direct message in the chat it came from and records it all", async () => {
    t = await startTestGateway();
    t.fake.enqueue({
      text: "Hello Alice!",
      usage: { prompt_tokens: 120, completion_tokens: 5, total_tokens: 125 },
    });
    const outcome = await done(await t.chat.inject({ text: "hi there" }));
    expect(outcome).toMatchObject({
      stopReason: "end",
      sessionKey: "main",
      payloads: [{ text: "Hello Alice!" }],
    });
    expect(t.chat.sent).toEqual([
      expect.objectContaining({ channel: "chat", chatId: "c-alice", text: "Hello Alice!", kind: "reply" }),
    ]);
    const messages = await t.transcript();
    expect(messages.map((m) => [m.message.role, m.message.content])).toEqual([
      ["user", "hi there"],
      ["assistant", "Hello Alice!"],
    ]);
    expect(messages[0]!.meta).toMatchObject({
      channel: "chat",
      chatId: "c-alice",
      senderId: "alice",
      messageId: "m1",
    });
    await t.idle();
    const entry = await t.gateway.store.get("main");
    expect(entry).toMatchObject({
      model: "fake-model",
      contextTokens: 120,
      contextEstimated: false,
      inputTokens: 120,
      outputTokens: 5,
      totalTokens: 125,
      origin: { channel: "chat", chatId: "c-alice" },
    });
    expect(entry?.lastInteractionAt).toBe(t.clock.now());
  });

  it("puts direct chats of every sender in main and each group in its own session", async () => {
    t = await startTestGateway({ config: { inbound: { groupChat: { requireMention: false } } } });
    await done(await t.chat.inject({ text: "from alice" }));
    await done(await t.chat.inject({ text: "from bob", senderId: "bob", chatId: "c-bob" }));
    await done(
      await t.chat.inject({
        text: "in the group",
        chatType: "group",
        chatId: "-1001234",
        senderId: "bob",
        senderName: "Bob",
      }),
    );
    expect(t.chat.textsTo("c-alice")).toEqual(["echo: from alice"]);
    // Two people in main's direct chats: the model is told who wrote each message (the fake echoes the last).
    expect(t.chat.textsTo("c-bob")).toEqual(["echo: Bob: from bob"]);
    // In a group the model is told who said what (the fake echoes what it was sent).
    expect(t.chat.textsTo("-1001234")).toEqual(["echo: Bob: in the group"]);
    expect((await t.transcript("main")).map((m) => m.message.content)).toEqual([
      "from alice",
      "echo: from alice",
      "from bob",
      "echo: Bob: from bob",
    ]);
    expect(t.fake.requests[1]!.body.messages.filter((m) => m.role === "user").map((m) => m.content)).toEqual([
      "Alice: from alice",
      "Bob: from bob",
    ]);
    expect((await t.transcript("group:-1001234")).map((m) => m.message.content)).toEqual([
      "in the group",
      "echo: Bob: in the group",
    ]);
  });

  it("answers group messages only when mentioned (by flag or pattern)", async () => {
    t = await startTestGateway({ config: { inbound: { groupChat: { mentionPatterns: ["@clawd"] } } } });
    const ignored = await done(
      await t.chat.inject({ text: "just chatting", chatType: "group", chatId: "g1" }),
    );
    expect(ignored.stopReason).toBe("filtered");
    await done(await t.chat.inject({ text: "hey @clawd", chatType: "group", chatId: "g1" }));
    await done(await t.chat.inject({ text: "you there?", chatType: "group", chatId: "g1", mentioned: true }));
    expect(t.chat.textsTo("g1")).toEqual(["echo: Alice: hey @clawd", "echo: Alice: you there?"]);
    expect(t.fake.requests).toHaveLength(2);
  });

  it("keeps unaddressed group messages as context, with who said them, for the next answered one", async () => {
    t = await startTestGateway();
    const g = { chatType: "group" as const, chatId: "g2" };
    await done(await t.chat.inject({ ...g, text: "lunch at noon?", senderId: "bob", senderName: "Bob" }));
    await done(await t.chat.inject({ ...g, text: "works for me", senderId: "alice", senderName: "Carol" }));
    expect(t.fake.requests).toHaveLength(0);
    expect(t.chat.sent).toHaveLength(0);
    await done(await t.chat.inject({ ...g, text: "what did they decide?", mentioned: true }));
    const sent = t.fake.requests[0]!.body.messages.map((m) => m.content);
    expect(sent).toContainEqual(
      "[Messages in the group that were not addressed to you; for context, no answer needed]\nBob: lunch at noon?\nCarol: works for me",
    );
    expect(sent.at(-1)).toBe("Alice: what did they decide?");
    expect(t.gateway.journal.openCount()).toBe(0);
  });

  it("shows at most groupChat.historyLimit unaddressed messages in a row, the newest", async () => {
    t = await startTestGateway({ config: { inbound: { groupChat: { historyLimit: 2 } } } });
    const g = { chatType: "group" as const, chatId: "g3", senderId: "bob", senderName: "Bob" };
    for (const text of ["one", "two", "three"]) await done(await t.chat.inject({ ...g, text }));
    await done(await t.chat.inject({ chatType: "group", chatId: "g3", text: "summary?", mentioned: true }));
    const contextMessage = t.fake.requests[0]!.body.messages.find((m) =>
      String(m.content).startsWith("[Messages"),
    );
    expect(contextMessage?.content).toBe(
      "[Messages in the group that were not addressed to you (the newest 2 of 3); for context, no answer needed]\nBob: two\nBob: three",
    );
  });

  it("ignores a sender that is not allowed: no model call, no reply, no transcript", async () => {
    t = await startTestGateway();
    const result = await t.chat.inject({ text: "let me in", senderId: "mallory", chatId: "c-m" });
    expect(result).toEqual({ status: "denied", reason: "not in the test allowlist" });
    expect(t.fake.requests).toHaveLength(0);
    expect(t.chat.sent).toHaveLength(0);
    expect(await t.gateway.store.get("main")).toBeUndefined();
  });

  it("answers a repeated message id once", async () => {
    t = await startTestGateway();
    await done(await t.chat.inject({ text: "once", messageId: "same" }));
    expect(await t.chat.inject({ text: "once", messageId: "same" })).toEqual({ status: "duplicate" });
    expect(t.fake.requests).toHaveLength(1);
  });

  it("/new mints a new sessionId without a model call; /new <text> answers the text there", async () => {
    t = await startTestGateway();
    await done(await t.chat.inject({ text: "first" }));
    const first = (await t.gateway.store.get("main"))!.sessionId;
    const bare = await done(await t.chat.inject({ text: "/new" }));
    expect(bare).toMatchObject({ stopReason: "command", payloads: [{ text: "New session started." }] });
    const second = (await t.gateway.store.get("main"))!.sessionId;
    expect(second).not.toBe(first);
    expect(t.fake.requests).toHaveLength(1);
    await done(await t.chat.inject({ text: "/new  Keep This  Text" }));
    const third = (await t.gateway.store.get("main"))!.sessionId;
    expect(third).not.toBe(second);
    expect((await t.transcript()).map((m) => m.message.content)).toEqual([
      " Keep This  Text",
      "echo:  Keep This  Text",
    ]);
    // The request held only the new session's message: nothing of the first session leaked in.
    const lastRequest = t.fake.requests.at(-1)!.body.messages.filter((m) => m.role !== "system");
    expect(lastRequest.map((m) => m.content)).toEqual([" Keep This  Text"]);
  });

  it("tells watchers of the key each time it holds a new session, before anything of that session", async () => {
    t = await startTestGateway({ config: { inbound: { reply: { session: { idleMinutes: 60 } } } } });
    const seen: string[] = [];
    t.gateway.onEvent((e) => {
      if (e.type === "session") seen.push(`session ${e.reason} ${e.sessionId}`);
      if (e.type === "message") seen.push(`message ${e.role}`);
    });
    const id = async () => (await t.gateway.store.get("main"))!.sessionId;
    await done(await t.chat.inject({ text: "first" }));
    const first = await id();
    await done(await t.chat.inject({ text: "second" }));
    await done(await t.chat.inject({ text: "/new" }));
    const reset = await id();
    t.clock.advance(61 * 60_000);
    await done(await t.chat.inject({ text: "later" }));
    expect(seen).toEqual([
      `session new-key ${first}`,
      "message user",
      "message assistant",
      "message user",
      "message assistant",
      `session reset ${reset}`,
      `session idle ${await id()}`,
      "message user",
      "message assistant",
    ]);
  });

  it("starts a new session after idleMinutes without a real exchange, with a one-line note", async () => {
    t = await startTestGateway({ config: { inbound: { reply: { session: { idleMinutes: 60 } } } } });
    await done(await t.chat.inject({ text: "morning" }));
    const first = (await t.gateway.store.get("main"))!.sessionId;
    t.clock.advance(59 * 60_000);
    await done(await t.chat.inject({ text: "/status" }));
    t.clock.advance(2 * 60_000);
    // 61 minutes after the last exchange; /status in between does not count.
    await done(await t.chat.inject({ text: "evening" }));
    const second = (await t.gateway.store.get("main"))!.sessionId;
    expect(second).not.toBe(first);
    const texts = t.chat.textsTo("c-alice");
    expect(texts.at(-2)).toBe("(A new session began: nothing was said here for over 60 minutes.)");
    expect(texts.at(-1)).toBe("echo: evening");
  });

  it("/status answers at once during a running turn, without the model", async () => {
    t = await startTestGateway();
    t.fake.enqueue({ text: "slow", hang: "before-headers" });
    const running = await t.chat.inject({ text: "think hard" });
    await t.fake.waitForRequest(1);
    const status = await done(await t.chat.inject({ text: "/status" }));
    const text = status.payloads[0]!.text;
    expect(text).toContain("Session: main");
    expect(text).toContain("Model: fake-model at");
    expect(text).toMatch(/^chat ok$/m);
    expect(text).toContain("Turn: running");
    expect(t.fake.requests).toHaveLength(1);
    t.fake.release();
    expect((await done(running)).stopReason).toBe("end");
  });

  it("/status and GET /api/sessions name the session's phase: processing while its turn is held, ready after", async () => {
    t = await startTestGateway({ listen: true });
    await done(await t.chat.inject({ text: "hi" }));
    await t.idle();
    const address = t.gateway.listeningAddress()!;
    const phases = async () => {
      const res = await fetch(`http://${address.host}:${address.port}/api/sessions`, {
        headers: { authorization: "Bearer test-token-0123456789" },
      });
      const body = (await res.json()) as { sessions: { key: string; phase?: string }[] };
      return Object.fromEntries(body.sessions.map((s) => [s.key, s.phase]));
    };
    t.fake.enqueue({ text: "slow", hang: "before-headers" });
    const running = await t.chat.inject({ text: "think hard" });
    await t.fake.waitForRequest(2);
    const during = (await done(await t.chat.inject({ text: "/status" }))).payloads[0]!.text;
    expect(during).toMatch(/^Session: main · processing · id /m);
    expect(await phases()).toEqual({ main: "processing" });
    t.fake.release();
    await done(running);
    await t.idle();
    const after = (await done(await t.chat.inject({ text: "/status" }))).payloads[0]!.text;
    expect(after).toMatch(/^Session: main · ready · id /m);
    expect(await phases()).toEqual({ main: "ready" });
  });

  it("/status in a group shows no local path and no endpoint URL; in a direct chat it does", async () => {
    t = await startTestGateway();
    const direct = (await done(await t.chat.inject({ text: "/status" }))).payloads[0]!.text;
    expect(direct).toContain(`Store: ${t.gateway.store.path}`);
    expect(direct).toContain(`at ${t.fake.url}`);
    const asked = { text: "/status", chatId: "g-1", chatType: "group", mentioned: true } as const;
    const group = (await done(await t.chat.inject(asked))).payloads[0]!.text;
    expect(group).toContain("Session: group:");
    expect(group).toMatch(/^Model: fake-model — /m);
    expect(group).not.toContain("Store:");
    expect(group).not.toContain(t.gateway.store.path);
    expect(group).not.toContain(t.fake.url);
  });

  it("/stop really aborts the running turn; the model request goes away", async () => {
    t = await startTestGateway();
    t.fake.enqueue({ text: "never", hang: "after-first-chunk" });
    const running = await t.chat.inject({ text: "long task" });
    await t.fake.waitForRequest(1);
    const stop = await done(await t.chat.inject({ text: "/stop" }));
    expect(stop.payloads).toEqual([{ text: "Stopped." }]);
    const outcome = await done(running);
    expect(outcome.stopReason).toBe("aborted");
    await t.fake.waitForAbort(1);
    // Nothing cut off was stored; the next message is answered normally.
    expect((await t.transcript()).map((m) => m.message.role)).toEqual(["user"]);
    await done(await t.chat.inject({ text: "again" }));
    expect(t.chat.textsTo("c-alice").at(-1)).toBe("echo: again");
  });

  it("/think and /verbose are saved on the session entry; thinking goes to the model", async () => {
    t = await startTestGateway();
    const think = await done(await t.chat.inject({ text: "/think high" }));
    expect(think.payloads).toEqual([{ text: "Thinking level set to high." }]);
    expect(think).toMatchObject({ stopReason: "command", sessionKey: "main" });
    expect(think.sessionId).toBe((await t.gateway.store.get("main"))!.sessionId);
    const verbose = await done(await t.chat.inject({ text: "/verbose on" }));
    expect(verbose.payloads).toEqual([{ text: "Verbose set to on." }]);
    expect(await t.gateway.store.get("main")).toMatchObject({ thinkingLevel: "high", verboseLevel: "on" });
    expect(t.fake.requests).toHaveLength(0);
    await done(await t.chat.inject({ text: "/think low what now?" }));
    expect(t.fake.requests[0]!.body.reasoning_effort).toBe("low");
    expect(t.chat.textsTo("c-alice").at(-1)).toBe("echo: what now?");
  });

  it("a reply cut off at the output limit is neither posted nor stored", async () => {
    t = await startTestGateway();
    t.fake.enqueue({ text: "half an ans", finishReason: "length" });
    const outcome = await done(await t.chat.inject({ text: "write a novel" }));
    expect(outcome.stopReason).toBe("output-limit");
    expect(t.chat.textsTo("c-alice")).toEqual([
      "⚠️ The reply was cut off at the output limit, so it was not posted. The session is ready for your next message.",
    ]);
    expect((await t.transcript()).map((m) => m.message.role)).toEqual(["user"]);
  });

  it("with no model configured and an endpoint that lists several, every reply says how to configure one", async () => {
    const fake = await startFakeOpenAI();
    fake.models.splice(0, fake.models.length, "model-a", "model-b");
    t = await startTestGateway({ model: null, fake });
    const outcome = await done(await t.chat.inject({ text: "hello?" }));
    expect(outcome.payloads[0]!.text).toMatch(/^No model is configured: set inbound\.reply\.agent\.model/);
    expect(t.fake.requests).toHaveLength(0);
    expect(await t.gateway.statusText("main")).toContain("Model: not configured");
    await fake.close();
  });

  it("with no model configured, the notice names the config file the gateway reads, by its full path (.json5)", async () => {
    const stateDir = await mkdtemp(join(tmpdir(), "clawdis-gw-json5-"));
    await writeFile(join(stateDir, "clawdis.json5"), "{}\n");
    const fake = await startFakeOpenAI();
    fake.models.splice(0, fake.models.length, "model-a", "model-b");
    t = await startTestGateway({ model: null, fake, stateDir });
    const outcome = await done(await t.chat.inject({ text: "hello?" }));
    expect(outcome.payloads[0]!.text).toContain(` in ${join(stateDir, "clawdis.json5")} (a running gateway`);
    expect(t.chat.textsTo("c-alice")).toEqual([outcome.payloads[0]!.text]);
    await t.close();
    await fake.close();
    await rm(stateDir, { recursive: true, force: true });
  });

  it("with no model configured, uses the endpoint's only model and says so in /status", async () => {
    const fake = await startFakeOpenAI();
    fake.models.splice(0, fake.models.length, "the-only-one");
    t = await startTestGateway({ model: null, fake });
    await done(await t.chat.inject({ text: "hello?" }));
    expect(t.fake.requests[0]!.body.model).toBe("the-only-one");
    expect(await t.gateway.statusText("main")).toMatch(
      /Model: the-only-one at .* · model from the endpoint's only model, endpoint from config/,
    );
    await fake.close();
  });

  it("splits a long reply to the transport's limit", async () => {
    t = await startTestGateway();
    t.chat.maxTextLength = 20;
    t.fake.enqueue({ text: "one two three four five six seven eight nine ten" });
    await done(await t.chat.inject({ text: "count" }));
    expect(t.chat.textsTo("c-alice")).toEqual(["one two three four", "five six seven eight", "nine ten"]);
  });
});

describe("gateway: plugin failures", () => {
  let t: TestGateway;
  afterEach(async () => {
    await t?.close();
  });

  it("a plugin that throws at start does not take the gateway down, and /status shows it down", async () => {
    const broken = definePlugin({
      apiVersion: PLUGIN_API_VERSION,
      id: "broken",
      create: () => ({
        start: async () => {
          throw new Error("cannot reach the chat service");
        },
      }),
    });
    t = await startTestGateway({ plugins: [broken] });
    const status = await done(await t.chat.inject({ text: "/status" }));
    // One line per transport; the failed one says why.
    expect(status.payloads[0]!.text).toMatch(/^chat ok$/m);
    expect(status.payloads[0]!.text).toMatch(/^broken down: .*cannot reach the chat service/m);
    expect(t.gateway.host.states().find((s) => s.id === "broken")).toMatchObject({
      state: "down",
      lastError: expect.stringContaining("cannot reach the chat service"),
    });
    await done(await t.chat.inject({ text: "still there?" }));
    expect(t.chat.textsTo("c-alice").at(-1)).toBe("echo: still there?");
  });
});
