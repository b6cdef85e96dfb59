import { execFileSync } from "node:child_process";
import { appendFile, readFile, stat } from "node:fs/promises";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { bashTool } from "../src/agent/tools/index.js";
import type { ToolContext, ToolDefinition, ToolResult } from "../src/plugin-api/types.js";
import { type FakeOpenAI, startFakeOpenAI } from "./fakes/openai-server.js";
import { done, startTestGateway, type TestGateway } from "./helpers/gateway-harness.js";

/**
 * Rules of turns and chat commands that a mutation review found unguarded (issue 7): a tool past
 * `toolExecutionSeconds` gets its own signal aborted; `/think` and `/verbose` do not keep a session alive;
 * `/status` does not wait for the endpoint's model list; a bad transcript line is reported when a turn reads it.
 */

/** Rejects with `what` when `promise` has not settled within `ms`: a failure deadline, never a wait. */
function within<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what} (no answer within ${ms} ms)`)), ms);
  });
  return Promise.race([promise, deadline]).finally(() => clearTimeout(timer));
}

/** Whether a process with this pid exists (a zombie counts: kill(pid, 0) succeeds on one). */
function exists(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/** The real bash tool, watched: what context each call got, and when each call returned. */
function watchedBash(): {
  tool: ToolDefinition;
  calls: { context: ToolContext; result: Promise<ToolResult> }[];
} {
  const bash = bashTool();
  const calls: { context: ToolContext; result: Promise<ToolResult> }[] = [];
  return {
    calls,
    tool: {
      ...bash,
      execute(args, context) {
        const result = bash.execute(args, context);
        calls.push({ context, result });
        return result;
      },
    },
  };
}

describe("gateway rules: the tool watchdog", () => {
  let t: TestGateway | undefined;
  const groups: number[] = [];
  afterEach(async () => {
    // A bash the watchdog failed to kill must not outlive the test (or touch its marker later).
    for (const pid of groups.splice(0)) {
      try {
        process.kill(-pid, "SIGKILL");
      } catch {
        // gone, as it should be
      }
    }
    await t?.close();
    t = undefined;
  });

  it("a bash call past toolExecutionSeconds is killed through its own signal: the process is gone", async () => {
    const bash = watchedBash();
    // toolExecutionSeconds is larger than the test takes: bash's own real-time limit (timeoutMs) must not be
    // what kills it; only the watchdog on the manual clock may.
    t = await startTestGateway({
      tools: [bash.tool],
      config: { inbound: { reply: { session: { timeouts: { toolExecutionSeconds: 20 } } } } },
    });
    const fifo = join(t.stateDir, "pid.fifo");
    const marker = join(t.stateDir, "marker");
    execFileSync("mkfifo", [fifo]);
    t.fake.enqueue(
      {
        toolCalls: [{ name: "bash", arguments: { command: `echo $$ > ${fifo}; sleep 30; touch ${marker}` } }],
      },
      { text: "the command was too slow" },
    );
    const running = await t.chat.inject({ text: "run the slow thing" });
    // Reading the FIFO completes once the command has written its pid: it is running.
    const pid = Number((await readFile(fifo, "utf8")).trim());
    groups.push(pid);
    expect(exists(pid)).toBe(true);

    t.clock.advance(20_000);
    const outcome = await done(running);
    expect(outcome.payloads).toEqual([{ text: "the command was too slow" }]);
    expect((await t.transcript()).find((m) => m.message.role === "tool")?.message.content).toBe(
      "bash timed out after 20 s.",
    );
    const call = bash.calls[0]!;
    expect(call.context.signal.aborted).toBe(true);
    // The tool returns once every process holding its pipes is gone; bash itself has been reaped by then.
    const result = await within(call.result, 10_000, "the bash call did not end after its signal aborted");
    expect(result.output).toContain("[aborted: the command and everything it started were killed]");
    expect(exists(pid)).toBe(false);
    await expect(stat(marker)).rejects.toThrow();
  });
});

describe("gateway rules: commands that are not a real exchange", () => {
  let t: TestGateway | undefined;
  afterEach(async () => {
    await t?.close();
    t = undefined;
  });

  it.each([
    ["/think high", "Thinking level set to high."],
    ["/verbose on", "Verbose set to on."],
  ])(
    "%s does not keep the session alive: idle expiry still starts a new session",
    async (directive, confirmation) => {
      t = await startTestGateway({ config: { inbound: { reply: { session: { idleMinutes: 60 } } } } });
      await done(await t.chat.inject({ text: "morning" }));
      await t.idle();
      const before = (await t.gateway.store.get("main"))!;
      t.clock.advance(59 * 60_000);
      const answered = await done(await t.chat.inject({ text: directive }));
      expect(answered.payloads).toEqual([{ text: confirmation }]);
      await t.idle();
      const after = (await t.gateway.store.get("main"))!;
      expect(after.sessionId).toBe(before.sessionId);
      expect(after.lastInteractionAt).toBe(before.lastInteractionAt);
      t.clock.advance(2 * 60_000);
      // 61 minutes after the last exchange; the directive 59 minutes in does not count.
      await done(await t.chat.inject({ text: "evening" }));
      expect((await t.gateway.store.get("main"))!.sessionId).not.toBe(before.sessionId);
      expect(t.chat.textsTo("c-alice").slice(-2)).toEqual([
        "(A new session began: nothing was said here for over 60 minutes.)",
        "echo: evening",
      ]);
    },
  );
});

describe("gateway rules: /status and a hanging endpoint", () => {
  let t: TestGateway | undefined;
  let fake: FakeOpenAI | undefined;
  afterEach(async () => {
    fake?.releaseModels();
    await t?.close();
    t = undefined;
    await fake?.close();
    fake = undefined;
  });

  it("a /think sent while a message waits for the endpoint's model applies to that message", async () => {
    fake = await startFakeOpenAI();
    fake.hangModels = true;
    t = await startTestGateway({ fake, model: null });
    await fake.waitForModelsRequest(1);
    const waiting = await t.chat.inject({ text: "hello" });
    const think = await done(await t.chat.inject({ text: "/think high" }));
    expect(think.payloads).toEqual([{ text: "Thinking level set to high." }]);
    expect(fake.requests).toHaveLength(0);
    fake.releaseModels();
    await done(waiting);
    expect(fake.requests).toHaveLength(1);
    expect(fake.requests[0]!.body.reasoning_effort).toBe("high");
  });

  it("/status answers at once while the endpoint's GET /models hangs", async () => {
    fake = await startFakeOpenAI();
    fake.hangModels = true;
    t = await startTestGateway({ fake });
    // The start-up check of the endpoint is in flight and gets no answer.
    const check = await fake.waitForModelsRequest(1);
    const status = await within(
      done(await t.chat.inject({ text: "/status" })),
      10_000,
      "/status waited for the endpoint's model list",
    );
    expect(check.answered()).toBe(false);
    const text = status.payloads[0]!.text;
    expect(text).toContain("Session: main");
    expect(text).toContain(`Model: fake-model at ${fake.url}`);
    expect(fake.requests).toHaveLength(0);
  });

  it("a stop ends the endpoint check in flight: its request goes away, and nothing is logged about it", async () => {
    fake = await startFakeOpenAI();
    fake.hangModels = true;
    const started = await startTestGateway({ fake });
    const check = await fake.waitForModelsRequest(1);
    await started.close();
    expect(await within(check.closed, 10_000, "the held GET /models to go away")).toBe("aborted");
    expect(started.logs.filter((line) => line.message.includes("model endpoint check"))).toEqual([]);
  });
});

describe("gateway rules: a bad transcript line", () => {
  let t: TestGateway | undefined;
  afterEach(async () => {
    await t?.close();
    t = undefined;
  });

  it("is skipped when a turn reads the transcript, and a warning names the file", async () => {
    t = await startTestGateway();
    await done(await t.chat.inject({ text: "first" }));
    const { sessionId } = (await t.gateway.store.get("main"))!;
    const path = t.gateway.store.transcriptPath(sessionId);
    await appendFile(path, '{"type":"message","id":"garbled","message":{"role":"us\n');
    expect(t.logs.filter((l) => l.level === "warn")).toEqual([]);

    const outcome = await done(await t.chat.inject({ text: "second" }));
    expect(outcome.payloads).toEqual([{ text: "echo: second" }]);
    // The turn read the rest of the history: the good lines around the bad one reached the model.
    const sent = t.fake.requests[1]!.body.messages.filter((m) => m.role !== "system").map((m) => m.content);
    expect(sent).toEqual(["first", "echo: first", "second"]);
    const warnings = t.logs.filter((l) => l.level === "warn");
    expect(warnings).toEqual([
      expect.objectContaining({
        message: "transcript has lines that do not parse; they were skipped",
        fields: expect.objectContaining({ path }),
      }),
    ]);
    expect((await t.gateway.store.get("main"))!.sessionId).toBe(sessionId);
  });
});
