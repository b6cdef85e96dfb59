import { afterEach, describe, expect, it } from "vitest";
import { builtinTools } from "../src/agent/tools/index.js";
import type { ToolDefinition } from "../src/plugin-api/types.js";
import { done, startTestGateway, type TestGateway } from "./helpers/gateway-harness.js";
import { OWNER_TOOLS } from "./helpers/owner-tools.js";

function gate(): { promise: Promise<void>; open: () => void } {
  let open!: () => void;
  const promise = new Promise<void>((r) => {
    open = r;
  });
  return { promise, open };
}

/** A tool that says when it started and finishes only when the test lets it. */
function blockingTool(): { tool: ToolDefinition; started: Promise<void>; release: () => void } {
  const started = gate();
  const release = gate();
  return {
    started: started.promise,
    release: release.open,
    tool: {
      name: "wait",
      description: "waits",
      parameters: { type: "object", properties: {} },
      async execute() {
        started.open();
        await release.promise;
        return { ok: true, output: "waited" };
      },
    },
  };
}

describe("gateway: turns with tools", () => {
  let t: TestGateway;
  afterEach(async () => {
    await t?.close();
  });

  it("runs tool calls and keeps calls and results paired in the transcript", async () => {
    t = await startTestGateway({ tools: builtinTools() });
    t.fake.enqueue(
      { toolCalls: [{ name: "bash", arguments: { command: "echo tool-output-42" }, id: "call_1" }] },
      { text: "The command printed 42." },
    );
    const outcome = await done(await t.chat.inject({ text: "run echo" }));
    expect(outcome.payloads).toEqual([{ text: "The command printed 42." }]);
    const messages = await t.transcript();
    expect(messages.map((m) => m.message.role)).toEqual(["user", "assistant", "tool", "assistant"]);
    expect(messages[1]!.message.tool_calls?.[0]).toMatchObject({ id: "call_1", function: { name: "bash" } });
    expect(messages[2]!.message).toMatchObject({ role: "tool", tool_call_id: "call_1" });
    expect(messages[2]!.message.content).toContain("tool-output-42");
    // The second model call saw the tool result.
    const second = t.fake.requests[1]!.body.messages;
    expect(second.at(-1)).toMatchObject({ role: "tool", tool_call_id: "call_1" });
    expect(t.fake.requests[0]!.body.tools?.map((tool) => tool.function.name).sort()).toEqual([
      ...OWNER_TOOLS,
    ]);
  });

  it("offers no tools in group sessions unless configured", async () => {
    t = await startTestGateway({
      tools: builtinTools(),
      config: { inbound: { groupChat: { requireMention: false } } },
    });
    await done(await t.chat.inject({ text: "hi group", chatType: "group", chatId: "g" }));
    expect(t.fake.requests[0]!.body.tools).toBeUndefined();
  });

  it("a message from the same person joins the running turn at the next tool-batch boundary; others wait", async () => {
    const blocking = blockingTool();
    t = await startTestGateway({ tools: [blocking.tool] });
    t.fake.enqueue({ toolCalls: [{ name: "wait", arguments: {} }] });
    t.fake.setDefault((body) => {
      const users = body.messages.filter((m) => m.role === "user").map((m) => m.content);
      return { text: `saw: ${users.join(" | ")}` };
    });
    const first = await t.chat.inject({ text: "start the job" });
    await blocking.started;
    const joining = await t.chat.inject({ text: "and also this" });
    const other = await t.chat.inject({ text: "bob here", senderId: "bob", chatId: "c-bob" });
    blocking.release();
    const [a, b, c] = await Promise.all([done(first), done(joining), done(other)]);
    expect(a.payloads).toEqual([{ text: "saw: start the job | and also this" }]);
    expect(b.payloads).toEqual(a.payloads);
    // Bob's turn: main has heard two people, so each message carries its sender's name.
    expect(c.payloads).toEqual([
      { text: "saw: Alice: start the job | Alice: and also this | Bob: bob here" },
    ]);
    expect(t.fake.requests).toHaveLength(3);
    expect(t.chat.textsTo("c-alice")).toEqual(["saw: start the job | and also this"]);
    expect(t.chat.textsTo("c-bob")).toEqual([
      "saw: Alice: start the job | Alice: and also this | Bob: bob here",
    ]);
    const roles = (await t.transcript()).map((m) => `${m.message.role}:${m.message.content ?? ""}`);
    expect(roles).toEqual([
      "user:start the job",
      "assistant:",
      "tool:waited",
      "user:and also this",
      "assistant:saw: start the job | and also this",
      "user:bob here",
      "assistant:saw: Alice: start the job | Alice: and also this | Bob: bob here",
    ]);
  });

  it("a tool that runs past toolExecutionSeconds is ended and the model is told", async () => {
    const blocking = blockingTool();
    t = await startTestGateway({
      tools: [blocking.tool],
      config: { inbound: { reply: { session: { timeouts: { toolExecutionSeconds: 5 } } } } },
    });
    t.fake.enqueue({ toolCalls: [{ name: "wait", arguments: {}, id: "c1" }] }, { text: "it timed out" });
    const running = await t.chat.inject({ text: "go" });
    await blocking.started;
    t.clock.advance(5_000);
    const outcome = await done(running);
    blocking.release();
    expect(outcome.payloads).toEqual([{ text: "it timed out" }]);
    const tool = (await t.transcript()).find((m) => m.message.role === "tool");
    expect(tool?.message.content).toBe("wait timed out after 5 s.");
  });

  it("the prefill watchdog ends a model call that never answers and the person is told", async () => {
    t = await startTestGateway({
      config: { inbound: { reply: { session: { timeouts: { prefillSeconds: 30 } } } } },
    });
    t.fake.enqueue({ hang: "before-headers" });
    const running = await t.chat.inject({ text: "hello?" });
    await t.fake.waitForRequest(1);
    t.clock.advance(30_000);
    const outcome = await done(running);
    expect(outcome.stopReason).toBe("timeout");
    expect(t.chat.textsTo("c-alice")[0]).toMatch(
      /^⚠️ The model did not answer in time: .*\(prefill; timeouts\.prefillSeconds\)\. The session is ready for your next message\.$/,
    );
    await t.fake.waitForAbort(1);
    await done(await t.chat.inject({ text: "now?" }));
    expect(t.chat.textsTo("c-alice").at(-1)).toBe("echo: now?");
  });
});

describe("gateway: the generation watchdog", () => {
  let t: TestGateway;
  afterEach(async () => {
    await t?.close();
  });

  it("ends a model call that only sends keep-alive chunks after prefillSeconds", async () => {
    t = await startTestGateway({
      config: {
        inbound: { reply: { session: { timeouts: { prefillSeconds: 50, firstTokenSeconds: 100 } } } },
      },
    });
    t.fake.enqueue({ text: "late", hang: "after-first-chunk" });
    const running = await t.chat.inject({ text: "big prompt" });
    await t.fake.waitForRequest(1);
    // Only the role chunk comes: no output before the prefill deadline.
    t.clock.advance(50_000);
    const outcome = await done(running);
    expect(outcome.stopReason).toBe("timeout");
    expect(outcome.error).toContain("prefill");
  });

  it("ends a model call that started answering but does not finish within turnLlmSeconds", async () => {
    t = await startTestGateway({
      config: {
        inbound: { reply: { session: { timeouts: { turnLlmSeconds: 20, noProgressSeconds: 1000 } } } },
      },
    });
    t.fake.enqueue({ text: "a long answer that never ends", hang: "after-first-output" });
    const running = await t.chat.inject({ text: "talk" });
    await t.fake.waitForRequest(1);
    const deltas = new Promise<void>((resolve) => {
      const off = t.gateway.onEvent((event) => {
        if (event.type === "delta") {
          off();
          resolve();
        }
      });
    });
    await deltas;
    t.clock.advance(20_000);
    const outcome = await done(running);
    expect(outcome.stopReason).toBe("timeout");
    expect(outcome.error).toContain("generation");
    expect((await t.transcript()).map((m) => m.message.role)).toEqual(["user"]);
  });
});
