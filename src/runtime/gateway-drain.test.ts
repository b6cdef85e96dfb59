import { mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { type FakeOpenAI, startFakeOpenAI } from "../../test/fakes/openai-server.js";
import { done, startTestGateway, type TestGateway } from "../../test/helpers/gateway-harness.js";
import { DRAIN_DEADLINE_MS } from "../gateway.js";
import type { ToolDefinition } from "../plugin-api/types.js";

/** A tool that says when it started, sees its signal, and finishes only when the test lets it. */
function blockingTool(name = "wait") {
  let started!: () => void;
  let release!: () => void;
  const startedP = new Promise<void>((r) => {
    started = r;
  });
  const releaseP = new Promise<void>((r) => {
    release = r;
  });
  const runs: { aborted: boolean }[] = [];
  const tool: ToolDefinition = {
    name,
    description: "waits for the test",
    parameters: { type: "object", properties: {} },
    async execute(_args, context) {
      const run = { aborted: false };
      runs.push(run);
      started();
      await Promise.race([
        releaseP,
        new Promise<void>((r) => context.signal.addEventListener("abort", () => r(), { once: true })),
      ]);
      run.aborted = context.signal.aborted;
      return { ok: !run.aborted, output: run.aborted ? "aborted" : `${name} done` };
    },
  };
  return { tool, started: startedP, release: () => release(), runs };
}

const quick: ToolDefinition = {
  name: "quick",
  description: "answers at once",
  parameters: { type: "object", properties: {} },
  execute: async () => ({ ok: true, output: "quick done" }),
};

async function journalEnds(stateDir: string): Promise<string[]> {
  const text = await readFile(join(stateDir, "journal", "inbound.jsonl"), "utf8");
  return text
    .trim()
    .split("\n")
    .map((l) => JSON.parse(l) as { op: string; outcome?: string })
    .filter((r) => r.op === "end")
    .map((r) => r.outcome ?? "");
}

/**
 * The drain (docs/runtime.md, Stopping and restarting), in-process on real files: a stop lets the tool batch under
 * way finish, starts no model call after it, tells the person in one line, and leaves a resumable turn open for
 * the next start, which goes on from the transcript and answers once.
 */
describe("gateway: drain on stop and restart", () => {
  let stateDir: string;
  let fake: FakeOpenAI;
  const gateways: TestGateway[] = [];
  const start = async (tools: ToolDefinition[]) => {
    const t = await startTestGateway({ stateDir, fake, tools });
    gateways.push(t);
    return t;
  };
  beforeEach(async () => {
    stateDir = await mkdtemp(join(tmpdir(), "clawdis-drain-"));
    fake = await startFakeOpenAI();
  });
  afterEach(async () => {
    for (const t of gateways.splice(0)) await t.gateway.stop();
    await fake.close();
    await rm(stateDir, { recursive: true, force: true });
  });

  it("a stop during a tool batch lets the batch finish, calls no model, and the turn resumes after the restart", async () => {
    const blocking = blockingTool();
    const first = await start([blocking.tool, quick]);
    fake.enqueue({
      toolCalls: [
        { name: "wait", arguments: {}, id: "c1" },
        { name: "quick", arguments: {}, id: "c2" },
      ],
    });
    const running = await first.chat.inject({ text: "do the job", messageId: "job-1" });
    await blocking.started;
    const stopping = first.gateway.stop();
    blocking.release();
    await stopping;
    const told = await done(running);
    expect(told.stopReason).toBe("aborted");
    expect(first.chat.textsTo("c-alice")).toEqual([
      "The gateway is stopping; your message will be answered after it restarts.",
    ]);
    // The whole batch ran (the tool was not aborted), and no model call came after it.
    expect(blocking.runs).toEqual([{ aborted: false }]);
    expect(fake.requests).toHaveLength(1);
    expect((await first.transcript()).map((m) => `${m.message.role}:${m.message.content ?? ""}`)).toEqual([
      "user:do the job",
      "assistant:",
      "tool:wait done",
      "tool:quick done",
    ]);
    expect(await journalEnds(stateDir)).toEqual([]);

    fake.enqueue({ text: "job finished" });
    const second = await start([blocking.tool, quick]);
    await second.chat.waitForSent(1);
    await second.idle();
    expect(second.chat.textsTo("c-alice")).toEqual(["job finished"]);
    // It went on from the transcript: the results were in the call, nothing ran twice.
    expect(fake.requests[1]?.body.messages.at(-1)).toMatchObject({ role: "tool", tool_call_id: "c2" });
    expect(blocking.runs).toHaveLength(1);
    const finals = (await second.transcript()).filter((m) => m.meta?.final === true);
    expect(finals.map((m) => m.message.content)).toEqual(["job finished"]);
    expect(await journalEnds(stateDir)).toEqual(["replied"]);
  });

  it("with another message waiting, the drained turn resumes after the restart and is answered before it", async () => {
    const blocking = blockingTool();
    const first = await start([blocking.tool]);
    fake.enqueue({ toolCalls: [{ name: "wait", arguments: {}, id: "c1" }] });
    const running = await first.chat.inject({ text: "long job", messageId: "long-1" });
    await blocking.started;
    // Bob's message waits behind the turn (it cannot join alice's turn).
    const waiting = await first.chat.inject({ text: "bob asks", senderId: "bob", chatId: "c-bob" });
    const stopping = first.gateway.stop();
    blocking.release();
    await stopping;
    const notice = "The gateway is stopping; your message will be answered after it restarts.";
    expect((await done(running)).payloads).toEqual([{ text: notice }]);
    expect(first.chat.textsTo("c-alice")).toEqual([notice]);
    expect((await done(waiting)).stopReason).toBe("aborted");
    // Both records stay open: nothing was handed back to the person.
    expect(await journalEnds(stateDir)).toEqual([]);
    expect(first.logs.some((l) => l.message === "turn drained" && l.fields?.othersWaiting === 1)).toBe(true);

    fake.setDefault((body) => ({
      text: `answer ${body.messages.filter((m) => m.role === "user").length}: ${body.messages.at(-1)?.content}`,
    }));
    const second = await start([blocking.tool]);
    await second.chat.waitForSent(2);
    await second.idle();
    // Alice's turn goes on from its tool result, and is answered first; then bob's message.
    expect(second.chat.sent.map((m) => [m.chatId, m.text])).toEqual([
      ["c-alice", "answer 1: wait done"],
      ["c-bob", "answer 2: Bob: bob asks"],
    ]);
    expect(blocking.runs).toHaveLength(1);
    expect(fake.requests).toHaveLength(3);
    expect(await journalEnds(stateDir)).toEqual(["replied", "replied"]);
  });

  it("a message that would join at the batch boundary does not join a drained turn: it is answered after the resumed one", async () => {
    const blocking = blockingTool();
    const first = await start([blocking.tool]);
    fake.enqueue({ toolCalls: [{ name: "wait", arguments: {}, id: "c1" }] });
    const running = await first.chat.inject({ text: "start it" });
    await blocking.started;
    const joining = await first.chat.inject({ text: "and this too" });
    const stopping = first.gateway.stop();
    blocking.release();
    await stopping;
    expect((await done(running)).payloads).toEqual([
      { text: "The gateway is stopping; your message will be answered after it restarts." },
    ]);
    expect((await done(joining)).stopReason).toBe("aborted");
    fake.setDefault((body) => ({ text: `answering: ${body.messages.at(-1)?.content}` }));
    const second = await start([blocking.tool]);
    await second.chat.waitForSent(2);
    expect(second.chat.textsTo("c-alice")).toEqual(["answering: wait done", "answering: and this too"]);
  });

  it("a drained turn whose answer text was shown resumes from that text; the notice says the answer will be finished", async () => {
    const blocking = blockingTool();
    const first = await start([blocking.tool]);
    fake.enqueue({
      text: "Let me look.",
      toolCalls: [{ name: "wait", arguments: {}, id: "c1" }],
      hang: "after-first-output",
      chunks: 2,
    });
    const streaming = new Promise<void>((resolve) => {
      first.gateway.onEvent((e) => {
        if (e.type === "delta" && e.text.length > 0) resolve();
      });
    });
    const running = await first.chat.inject({ text: "look it up" });
    await streaming;
    const stopping = first.gateway.stop();
    fake.release();
    await stopping;
    const notice = "The gateway is stopping; I will finish this answer after it restarts.";
    expect((await done(running)).payloads).toEqual([{ text: notice }]);
    expect(first.chat.textsTo("c-alice")).toEqual([notice]);
    // The tool asked for while draining did not run; its call has its result.
    expect(blocking.runs).toEqual([]);
    expect(await journalEnds(stateDir)).toEqual([]);

    fake.enqueue({ text: "found it" });
    const second = await start([blocking.tool]);
    await second.chat.waitForSent(1);
    expect(second.chat.textsTo("c-alice")).toEqual(["found it"]);
    // The resumed call holds what was shown: the model goes on from it.
    expect(fake.requests[1]?.body.messages.slice(-2)).toMatchObject([
      { role: "assistant", content: "Let me look." },
      { role: "tool", tool_call_id: "c1", content: "Not run: the gateway is stopping." },
    ]);
  });

  it("a message that joined the turn before the drain goes with it: one resumed reply answers both", async () => {
    const blocking = blockingTool();
    const first = await start([blocking.tool]);
    fake.enqueue({ toolCalls: [{ name: "wait", arguments: {}, id: "c1" }] }, { hang: "before-headers" });
    const running = await first.chat.inject({ text: "first part" });
    await blocking.started;
    const joining = await first.chat.inject({ text: "second part" });
    blocking.release();
    // The second call (after the batch, with the joined message) is in flight when the drain begins.
    await fake.waitForRequest(2);
    await first.gateway.stop();
    const resumeNotice = "The gateway is stopping; your message will be answered after it restarts.";
    expect((await done(running)).payloads).toEqual([{ text: resumeNotice }]);
    expect((await done(joining)).payloads).toEqual([{ text: resumeNotice }]);
    expect(first.chat.textsTo("c-alice")).toEqual([resumeNotice]);
    // The joined message's record ended: it is answered with the first one's resumed turn, not on its own.
    expect(await journalEnds(stateDir)).toEqual(["replied"]);

    fake.setDefault((body) => ({
      text: `both: ${body.messages
        .filter((m) => m.role === "user")
        .map((m) => m.content)
        .join(" + ")}`,
    }));
    const second = await start([blocking.tool]);
    await second.chat.waitForSent(1);
    await second.idle();
    expect(second.chat.textsTo("c-alice")).toEqual(["both: first part + second part"]);
    expect(fake.requests).toHaveLength(3);
    const finals = (await second.transcript()).filter((m) => m.meta?.final === true);
    expect(finals.map((m) => m.message.content)).toEqual(["both: first part + second part"]);
  });

  it("a model call that has not streamed text yet is cancelled; the message is answered after the restart", async () => {
    const first = await start([]);
    fake.enqueue({ hang: "before-headers", text: "never used" });
    const running = await first.chat.inject({ text: "think hard" });
    await fake.waitForRequest(1);
    const stopping = first.gateway.stop();
    await fake.waitForAbort(1);
    await stopping;
    expect((await done(running)).payloads).toEqual([
      { text: "The gateway is stopping; your message will be answered after it restarts." },
    ]);
    fake.enqueue({ text: "thought" });
    const second = await start([]);
    await second.chat.waitForSent(1);
    expect(second.chat.textsTo("c-alice")).toEqual(["thought"]);
  });

  it("a stop cancels the model calls of many sessions at once, with no listener warning", async () => {
    const t = await startTestGateway({
      stateDir,
      fake,
      config: { inbound: { groupChat: { requireMention: false } } },
    });
    gateways.push(t);
    const warnings: string[] = [];
    const onWarning = (warning: Error) => warnings.push(`${warning.name}: ${warning.message}`);
    process.on("warning", onWarning);
    try {
      const chats = Array.from({ length: 12 }, (_, i) => `g-${i}`);
      for (const _ of chats) fake.enqueue({ hang: "before-headers", text: "never used" });
      const running = [];
      for (const chatId of chats)
        running.push(await t.chat.inject({ text: "think hard", chatId, chatType: "group" }));
      await fake.waitForRequest(chats.length);
      const stopping = t.gateway.stop();
      await fake.waitForAbort(chats.length);
      await stopping;
      for (const turn of running) {
        expect((await done(turn)).payloads).toEqual([
          { text: "The gateway is stopping; your message will be answered after it restarts." },
        ]);
      }
      // Warnings are emitted on the next tick.
      await new Promise((resolve) => setImmediate(resolve));
      expect(warnings).toEqual([]);
    } finally {
      process.off("warning", onWarning);
    }
  });

  it("a model call already streaming text is let finish: its reply is sent and nothing is left for the restart", async () => {
    const first = await start([]);
    fake.enqueue({ hang: "after-first-output", text: "a whole answer", chunks: 3 });
    const streaming = new Promise<void>((resolve) => {
      first.gateway.onEvent((e) => {
        if (e.type === "delta") resolve();
      });
    });
    const running = await first.chat.inject({ text: "tell me" });
    await streaming;
    const stopping = first.gateway.stop();
    fake.release();
    await stopping;
    expect((await done(running)).payloads).toEqual([{ text: "a whole answer" }]);
    expect(first.chat.textsTo("c-alice")).toEqual(["a whole answer"]);
    expect(await journalEnds(stateDir)).toEqual(["replied"]);
  });

  it("a restart says restarting; a drain that misses its deadline aborts the tool and leaves the record open", async () => {
    const blocking = blockingTool();
    let quickRuns = 0;
    const counted: ToolDefinition = {
      ...quick,
      execute: async () => ({ ok: true, output: `quick ${++quickRuns}` }),
    };
    const first = await start([blocking.tool, counted]);
    fake.enqueue({
      toolCalls: [
        { name: "wait", arguments: {}, id: "c1" },
        { name: "quick", arguments: {}, id: "c2" },
      ],
    });
    const running = await first.chat.inject({ text: "stuck job" });
    await blocking.started;
    const stopping = first.gateway.stop({ mode: "restarting" });
    first.clock.advance(DRAIN_DEADLINE_MS - 1);
    expect(blocking.runs).toEqual([{ aborted: false }]);
    first.clock.advance(1);
    await stopping;
    expect(blocking.runs).toEqual([{ aborted: true }]);
    expect((await done(running)).payloads).toEqual([
      { text: "The gateway is restarting; your message will be answered in a moment." },
    ]);
    expect(first.logs.some((l) => /did not reach a safe point within 20 s/.test(l.message))).toBe(true);
    expect(await journalEnds(stateDir)).toEqual([]);
    // The call cut off before it began gets its result: the resumed turn is told, and it does not run.
    expect((await first.transcript()).map((m) => `${m.message.role}:${m.message.content ?? ""}`)).toEqual([
      "user:stuck job",
      "assistant:",
      // The tool under way got its abort signal: executeTool's result for it.
      "tool:wait was stopped.",
      "tool:Not run: the gateway stopped before this call ran.",
    ]);

    fake.enqueue({ text: "picked up again" });
    const second = await start([blocking.tool, counted]);
    await second.chat.waitForSent(1);
    expect(second.chat.textsTo("c-alice")).toEqual(["picked up again"]);
    expect(fake.requests[1]?.body.messages.at(-1)).toMatchObject({
      role: "tool",
      tool_call_id: "c2",
      content: "Not run: the gateway stopped before this call ran.",
    });
    expect(quickRuns).toBe(0);
    expect(blocking.runs).toHaveLength(1);
  });
});
