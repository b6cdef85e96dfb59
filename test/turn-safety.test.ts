import { readFile } from "node:fs/promises";
import { afterEach, describe, expect, it } from "vitest";
import type { ToolDefinition } from "../src/plugin-api/types.js";
import type { FakeReply } from "./fakes/openai-server.js";
import { done, startTestGateway, type TestGateway } from "./helpers/gateway-harness.js";

/**
 * Turn safety through the in-process gateway (real files, the real openai SDK against the fake server, a manual
 * clock): the loop guard, compaction and the watchdogs of issue 11. The same rules through the real binary are
 * in test/e2e/turn-safety.test.ts.
 */

/** A tool that records its calls and answers with `answer(n)` (n = 1-based call number). */
function countingTool(name: string, answer: (n: number) => { ok: boolean; output: string }) {
  const calls: unknown[] = [];
  const tool: ToolDefinition = {
    name,
    description: `test tool ${name}`,
    parameters: { type: "object", properties: {} },
    async execute(args) {
      calls.push(args);
      return answer(calls.length);
    },
  };
  return { tool, calls };
}

async function rawTranscript(t: TestGateway, key = "main"): Promise<Record<string, unknown>[]> {
  const entry = await t.gateway.store.get(key);
  const text = await readFile(t.gateway.store.transcriptPath(entry!.sessionId), "utf8");
  return text
    .split("\n")
    .filter((l) => l.trim())
    .map((l) => JSON.parse(l) as Record<string, unknown>);
}

const toolText = (t: TestGateway, n: number) =>
  (t.fake.requests[n - 1]?.body.messages ?? [])
    .filter((m) => m.role === "tool")
    .map((m) => String(m.content));

describe("loop guard", () => {
  let t: TestGateway | undefined;
  afterEach(async () => {
    await t?.close();
    t = undefined;
  });

  it("a model that repeats the same call: two runs, then refusals, and the sixth ends the turn quietly with its text", async () => {
    const probe = countingTool("probe", () => ({ ok: true, output: "status: pending" }));
    t = await startTestGateway({ tools: [probe.tool] });
    // Keys in another order each time: still the same call.
    let flip = false;
    t.fake.setDefault(() => {
      flip = !flip;
      return {
        text: "Still checking the job.",
        toolCalls: [{ name: "probe", arguments: flip ? { a: 1, b: 2 } : { b: 2, a: 1 } }],
      };
    });
    const outcome = await done(await t.chat.inject({ text: "is the job done?" }));
    expect(probe.calls).toHaveLength(2);
    // 2 runs + 5 refused rounds + the round whose call is the 6th refusal.
    expect(t.fake.requests).toHaveLength(8);
    expect(toolText(t, 4).at(-1)).toContain("try something different");
    expect(toolText(t, 8).at(-1)).toContain("last warning");
    expect(outcome.payloads).toEqual([{ text: "Still checking the job." }]);
    expect(t.chat.textsTo("c-alice")).toEqual(["Still checking the job."]);
    const guards = (await rawTranscript(t)).filter((e) => e.type === "loop-guard");
    expect(guards.length).toBeGreaterThan(0);
    expect((guards.at(-1)!.state as { refused: number }).refused).toBe(6);
  });

  it("a poll whose result changes is not a loop", async () => {
    const poll = countingTool("poll", (n) => ({ ok: true, output: `progress ${n * 10}%` }));
    t = await startTestGateway({ tools: [poll.tool] });
    for (let i = 0; i < 9; i++) t.fake.enqueue({ toolCalls: [{ name: "poll", arguments: {} }] });
    t.fake.enqueue({ text: "done at 90%" });
    const outcome = await done(await t.chat.inject({ text: "wait for it" }));
    expect(poll.calls).toHaveLength(9);
    expect(outcome.payloads).toEqual([{ text: "done at 90%" }]);
  });

  it("failing calls: a nudge at 4 naming the cause, a stronger one at 6, and from 8 the next tool request ends the turn", async () => {
    const broken = countingTool("fetch_url", () => ({ ok: false, output: "connection refused" }));
    t = await startTestGateway({ tools: [broken.tool] });
    t.fake.setDefault((body) => ({
      text: "Let me try again.",
      toolCalls: [{ name: "fetch_url", arguments: { attempt: body.messages.length } }],
    }));
    const outcome = await done(await t.chat.inject({ text: "fetch it" }));
    // Weights 1, 2, 2, 2, 2 (the same cause): 1, 3, 5 (nudge), 7 (stronger), 9 → the 6th response ends it.
    expect(broken.calls).toHaveLength(5);
    expect(t.fake.requests).toHaveLength(6);
    expect(toolText(t, 4).at(-1)).toContain("most often: fetch_url: connection refused");
    expect(toolText(t, 5).at(-1)).toContain("Stop retrying");
    expect(outcome.payloads).toEqual([{ text: "Let me try again." }]);
    expect(t.chat.textsTo("c-alice").join("\n")).not.toContain("⚠️");
  });

  it("new person input resets the guard; a restart of the same turn does not", async () => {
    const probe = countingTool("probe", () => ({ ok: true, output: "same" }));
    t = await startTestGateway({ tools: [probe.tool] });
    const call: FakeReply = { toolCalls: [{ name: "probe", arguments: {} }] };
    t.fake.enqueue(call, call, call, { text: "ok" });
    await done(await t.chat.inject({ text: "first" }));
    expect(probe.calls).toHaveLength(2);
    t.fake.enqueue(call, call, { text: "ok again" });
    await done(await t.chat.inject({ text: "second" }));
    expect(probe.calls).toHaveLength(4);
  });
});

describe("loop guard: joined input", () => {
  let t: TestGateway | undefined;
  afterEach(async () => {
    await t?.close();
    t = undefined;
  });

  it("a message from the same person that joins the turn resets the guard", async () => {
    let release: () => void = () => {};
    let reached: () => void = () => {};
    const second = new Promise<void>((resolve) => {
      reached = resolve;
    });
    const calls: number[] = [];
    const probe: ToolDefinition = {
      name: "probe",
      description: "probe",
      parameters: { type: "object", properties: {} },
      async execute() {
        calls.push(calls.length + 1);
        if (calls.length === 2) {
          reached();
          await new Promise<void>((resolve) => {
            release = resolve;
          });
        }
        return { ok: true, output: "same" };
      },
    };
    t = await startTestGateway({ tools: [probe] });
    const call: FakeReply = { toolCalls: [{ name: "probe", arguments: {} }] };
    t.fake.enqueue(call, call, call, { text: "ok" });
    const first = await t.chat.inject({ text: "check" });
    await second;
    const joined = await t.chat.inject({ text: "and check once more" });
    release();
    await done(first);
    await done(joined);
    expect(calls).toEqual([1, 2, 3]);
  });
});

describe("compaction", () => {
  let t: TestGateway | undefined;
  afterEach(async () => {
    await t?.close();
    t = undefined;
  });

  const small = (over: Record<string, unknown> = {}) => ({
    inbound: {
      reply: {
        agent: { contextTokens: 2000, compactionModel: "notes-model", ...over },
        session: { compaction: { keepRecentMessages: 2 } },
      },
    },
  });

  it("past the threshold: notes from compactionModel, a compaction entry, one line to the person, the count on the store", async () => {
    t = await startTestGateway({ config: small() });
    t.fake.enqueue({ text: "a1", usage: { prompt_tokens: 500, completion_tokens: 5, total_tokens: 505 } });
    await done(await t.chat.inject({ text: "my cat is called Tom" }));
    t.fake.enqueue({ text: "a2", usage: { prompt_tokens: 1600, completion_tokens: 5, total_tokens: 1605 } });
    await done(await t.chat.inject({ text: "and my dog Rex" }));
    await t.idle();
    t.fake.enqueue({ text: "The person has a cat, Tom, and a dog, Rex." });
    t.fake.enqueue({ text: "a3", usage: { prompt_tokens: 300, completion_tokens: 5, total_tokens: 305 } });
    const outcome = await done(await t.chat.inject({ text: "what pets do I have?" }));
    await t.idle();
    expect(t.fake.requests[2]?.body.model).toBe("notes-model");
    expect(JSON.stringify(t.fake.requests[2]?.body.messages)).toContain("my cat is called Tom");
    const main = t.fake.requests[3]?.body.messages ?? [];
    expect(main.map((m) => m.role)).toEqual(["system", "user", "assistant", "user"]);
    expect(String(main[1]?.content)).toContain("The person has a cat, Tom, and a dog, Rex.");
    expect(outcome.payloads).toEqual([{ text: "a3" }]);
    const told = t.chat.textsTo("c-alice");
    expect(told.at(-2)).toMatch(/^context compacted: 1\.6k -> \d+ tokens$/);
    expect(told.at(-1)).toBe("a3");
    const entries = await rawTranscript(t);
    const compaction = entries.find((e) => e.type === "compaction");
    expect(compaction).toMatchObject({ notesBy: "notes-model", replacedEntries: 3, tokensBefore: 1600 });
    // Nothing was deleted from the file.
    expect(entries.filter((e) => e.type === "message")).toHaveLength(6);
    const entry = await t.gateway.store.get("main");
    expect(entry?.compactionCount).toBe(1);
    expect(entry?.contextTokens).toBe(300);
  });

  it("notes fail over to fallbackModel; when both fail the extractive notes stand", async () => {
    t = await startTestGateway({ config: small({ fallbackModel: "backup-model" }) });
    t.fake.enqueue({ text: "a1", usage: { prompt_tokens: 500, completion_tokens: 5, total_tokens: 505 } });
    await done(await t.chat.inject({ text: "remember: the code is 4711" }));
    await t.idle();
    t.fake.enqueue({ text: "a2", usage: { prompt_tokens: 1800, completion_tokens: 5, total_tokens: 1805 } });
    await done(await t.chat.inject({ text: "second" }));
    await t.idle();
    t.fake.enqueue({ status: 500 }, { status: 503 }, { text: "a3" });
    await done(await t.chat.inject({ text: "third" }));
    const models = t.fake.requests.slice(2).map((r) => r.body.model);
    expect(models).toEqual(["notes-model", "backup-model", "fake-model"]);
    const notes = String(t.fake.requests[4]?.body.messages[1]?.content);
    expect(notes).toContain("- remember: the code is 4711");
  });

  it("without usage from the provider, estimated tokens still trigger it, and /status says estimated", async () => {
    t = await startTestGateway({ config: small() });
    const long = "word ".repeat(1300); // ~1625 estimated tokens: over 0.75 x 2000
    t.fake.enqueue({ text: "ok", usage: null });
    // Over the threshold already, but with one message there is nothing to drop: no compaction yet.
    await done(await t.chat.inject({ text: long }));
    expect(t.fake.requests).toHaveLength(1);
    await t.idle();
    t.fake.enqueue({ text: "notes" }, { text: "fine", usage: null });
    await done(await t.chat.inject({ text: "more" }));
    expect(t.chat.textsTo("c-alice").at(-2)).toMatch(/^context compacted: /);
    await t.idle();
    const status = await done(await t.chat.inject({ text: "/status" }));
    expect(status.payloads[0]?.text).toMatch(/\(estimated\) · compactions 1/);
  });
});

describe("watchdogs", () => {
  let t: TestGateway | undefined;
  afterEach(async () => {
    await t?.close();
    t = undefined;
  });

  const withTimeouts = (timeouts: Record<string, number>) => ({
    config: { inbound: { reply: { session: { timeouts } } } },
  });
  const firstDelta = (g: TestGateway) =>
    new Promise<void>((resolve) => {
      const off = g.gateway.onEvent((e) => {
        if (e.type === "delta") {
          off();
          resolve();
        }
      });
    });

  it("prefill: a server that sends only keep-alives is cut at prefillSeconds, the request cancelled, the next message works", async () => {
    t = await startTestGateway(
      withTimeouts({ prefillSeconds: 50, firstTokenSeconds: 5, noProgressSeconds: 5 }),
    );
    t.fake.enqueue({ tail: { kind: "keepalive", everyMs: 5 } });
    const running = await t.chat.inject({ text: "big prompt" });
    await t.fake.waitForRequest(1);
    t.clock.advance(49_999);
    t.clock.advance(1);
    const outcome = await done(running);
    expect(outcome.stopReason).toBe("timeout");
    expect(outcome.error).toContain("prefillSeconds");
    await t.fake.waitForAbort(1);
    expect(await done(await t.chat.inject({ text: "now?" }))).toMatchObject({
      payloads: [{ text: "echo: now?" }],
    });
  });

  it("silence: once tokens flow, firstTokenSeconds without one ends the call; the late answer is never delivered", async () => {
    t = await startTestGateway(withTimeouts({ firstTokenSeconds: 30, noProgressSeconds: 1000 }));
    t.fake.enqueue({ text: "a long answer that stalls", chunks: 3, hang: "after-first-output" });
    const running = await t.chat.inject({ text: "talk" });
    await firstDelta(t);
    t.clock.advance(30_000);
    const outcome = await done(running);
    expect(outcome.error).toContain("timeouts.firstTokenSeconds");
    await t.fake.waitForAbort(1);
    t.fake.release();
    await t.idle();
    expect(t.chat.textsTo("c-alice").join("\n")).not.toContain("stalls");
    expect((await t.transcript()).map((m) => m.message.role)).toEqual(["user"]);
  });

  it("no progress: keep-alives after the first words do not count", async () => {
    t = await startTestGateway(withTimeouts({ firstTokenSeconds: 1000, noProgressSeconds: 20 }));
    t.fake.enqueue({ text: "Hi", chunks: 1, tail: { kind: "keepalive", everyMs: 5 } });
    const running = await t.chat.inject({ text: "talk" });
    await firstDelta(t);
    t.clock.advance(20_000);
    const outcome = await done(running);
    expect(outcome.error).toContain("noProgressSeconds");
  });

  it("no progress: a stream of reasoning only stops after 3 x noProgressSeconds", async () => {
    t = await startTestGateway(withTimeouts({ firstTokenSeconds: 1000, noProgressSeconds: 20 }));
    t.fake.enqueue({ reasoning: "thinking", tail: { kind: "reasoning", everyMs: 5 } });
    const running = await t.chat.inject({ text: "think hard" });
    const reasoningSeen = new Promise<void>((resolve) => {
      const off = t!.gateway.onEvent((e) => {
        if (e.type === "thinking") {
          off();
          resolve();
        }
      });
    });
    await reasoningSeen;
    t.clock.advance(59_000);
    let settled = false;
    void done(running).then(() => {
      settled = true;
    });
    await new Promise((resolve) => setImmediate(resolve));
    expect(settled).toBe(false);
    t.clock.advance(1_000);
    const outcome = await done(running);
    expect(outcome.error).toContain("60 s");
  });

  it("turnLlmSeconds set alone is the silence limit", async () => {
    t = await startTestGateway(withTimeouts({ turnLlmSeconds: 20, noProgressSeconds: 1000 }));
    t.fake.enqueue({ text: "never ends", chunks: 2, hang: "after-first-output" });
    const running = await t.chat.inject({ text: "talk" });
    await firstDelta(t);
    t.clock.advance(20_000);
    expect((await done(running)).error).toContain("timeouts.turnLlmSeconds");
  });
});
