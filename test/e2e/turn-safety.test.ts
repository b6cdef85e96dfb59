import { afterEach, describe, expect, it } from "vitest";
import { cleanupAll, E2eState } from "./harness.js";

/**
 * Issue 11 through the real binary against the fake model server: the loop guard ends a model that repeats
 * itself quietly, compaction tells the person and writes a `compaction` entry, and a watchdog cancels a stalled
 * call (short timeouts in the config: the binary runs on real time) while the next message works.
 */
describe("e2e: turn safety", () => {
  afterEach(cleanupAll);

  it("a model that repeats the same bash call: two runs, refusals, then its own text as the reply", async () => {
    const state = await E2eState.create();
    const gateway = await state.startGateway();
    state.fake.setDefault(() => ({
      text: "Checking once more.",
      toolCalls: [{ name: "bash", arguments: { command: "echo same" } }],
    }));
    const reply = await gateway.agent("is it ready?");
    expect(reply.status).toBe(200);
    expect(reply.body.payloads).toEqual([{ text: "Checking once more." }]);
    expect(state.fake.requests).toHaveLength(8);
    const results = (state.fake.requests[7]?.body.messages ?? []).filter((m) => m.role === "tool");
    expect(results.filter((m) => String(m.content).startsWith("Not run:"))).toHaveLength(5);
    const entries = await state.transcript(reply.body.meta.sessionId);
    expect(entries.some((e) => e.type === "loop-guard")).toBe(true);
    expect((await gateway.stop()).code).toBe(0);
  });

  it("compaction: one line to the person, a compaction entry, notes from compactionModel, /status counts it", async () => {
    const state = await E2eState.create({
      config: {
        inbound: {
          reply: {
            agent: { contextTokens: 2000, compactionModel: "notes-model" },
            session: { compaction: { keepRecentMessages: 2 } },
          },
        },
      },
    });
    const gateway = await state.startGateway();
    state.fake.enqueue({
      text: "noted",
      usage: { prompt_tokens: 400, completion_tokens: 2, total_tokens: 402 },
    });
    await gateway.agent("my cat is called Tom");
    state.fake.enqueue({
      text: "ok",
      usage: { prompt_tokens: 1700, completion_tokens: 2, total_tokens: 1702 },
    });
    await gateway.agent("and my dog is Rex");
    state.fake.enqueue({ text: "Pets: a cat, Tom, and a dog, Rex." }, { text: "Tom and Rex." });
    const reply = await gateway.agent("what pets do I have?");
    expect(reply.body.payloads.map((p) => p.text)).toEqual([
      expect.stringMatching(/^context compacted: 1\.7k -> \d+ tokens$/),
      "Tom and Rex.",
    ]);
    expect(state.fake.requests.map((r) => r.body.model)).toEqual([
      "fake-model",
      "fake-model",
      "notes-model",
      "fake-model",
    ]);
    const entries = await state.transcript(reply.body.meta.sessionId);
    expect(entries.find((e) => e.type === "compaction")).toMatchObject({
      notes: "Pets: a cat, Tom, and a dog, Rex.",
      tokensBefore: 1700,
    });
    const status = await gateway.agent("/status");
    expect(status.body.payloads[0]?.text).toContain("compactions 1");
    expect((await gateway.stop()).code).toBe(0);
  });

  it("a stalled answer: the silence watchdog cancels the request, one timeout line, the late words never arrive, the next message works", async () => {
    const state = await E2eState.create({
      config: { inbound: { reply: { session: { timeouts: { firstTokenSeconds: 0.5 } } } } },
    });
    const gateway = await state.startGateway();
    state.fake.enqueue({ text: "first words then a stall", chunks: 3, hang: "after-first-output" });
    const reply = await gateway.agent("talk to me");
    expect(reply.body.meta.stopReason).toBe("timeout");
    expect(reply.body.payloads[0]?.text).toMatch(/^⚠️ .*went silent.*firstTokenSeconds/);
    await state.fake.waitForAbort(1);
    state.fake.release();
    const next = await gateway.agent("still there?");
    expect(next.body.payloads).toEqual([{ text: "echo: still there?" }]);
    const messages = await state.messages(reply.body.meta.sessionId);
    expect(messages.map((m) => m.message.content).join("\n")).not.toContain("stall");
    expect((await gateway.stop()).code).toBe(0);
  });
});
