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

  it("with another message waiting, the drained turn ends with the stop notice; the waiting one is answered after", async () => {
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
    const told = await done(running);
    const notice =
      "The gateway is stopping, so I stopped partway through your message (more messages came in meanwhile); send it again once the gateway is back.";
    expect(told.payloads).toEqual([{ text: notice }]);
    expect(first.chat.textsTo("c-alice")).toEqual([notice]);
    expect((await done(waiting)).stopReason).toBe("aborted");
    expect(await journalEnds(stateDir)).toEqual(["replied"]);
    // The notice is the turn's final reply: a crash now would deliver it, never call the model for it again.
    const last = (await first.transcript()).at(-1);
    expect(last?.message).toEqual({ role: "assistant", content: notice });
    expect(last?.meta).toMatchObject({ final: true, drained: "others wait" });

    fake.setDefault((body) => ({ text: `answer ${body.messages.filter((m) => m.role === "user").length}` }));
    const second = await start([blocking.tool]);
    await second.chat.waitForSent(1);
    await second.idle();
    expect(second.chat.textsTo("c-bob")).toEqual(["answer 2"]);
    expect(second.chat.textsTo("c-alice")).toEqual([]);
    expect(fake.requests).toHaveLength(2);
  });

  it("a message that would join at the batch boundary does not join a drained turn: it is answered after the restart", async () => {
    const blocking = blockingTool();
    const first = await start([blocking.tool]);
    fake.enqueue({ toolCalls: [{ name: "wait", arguments: {}, id: "c1" }] });
    const running = await first.chat.inject({ text: "start it" });
    await blocking.started;
    const joining = await first.chat.inject({ text: "and this too" });
    const stopping = first.gateway.stop();
    blocking.release();
    await stopping;
    expect((await done(running)).payloads[0]?.text).toMatch(/stopped partway .*more messages came in/);
    expect((await done(joining)).stopReason).toBe("aborted");
    fake.setDefault((body) => ({ text: `answering: ${body.messages.at(-1)?.content}` }));
    const second = await start([blocking.tool]);
    await second.chat.waitForSent(1);
    expect(second.chat.textsTo("c-alice")).toEqual(["answering: and this too"]);
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
    const first = await start([blocking.tool]);
    fake.enqueue({ toolCalls: [{ name: "wait", arguments: {}, id: "c1" }] });
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
  });
});
