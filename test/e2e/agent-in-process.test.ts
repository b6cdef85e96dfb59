import { afterEach, describe, expect, it } from "vitest";
import { cleanupAll, E2eState } from "./harness.js";

describe("e2e: `clawdis agent` without a running gateway", () => {
  afterEach(cleanupAll);

  it("runs the turn in-process on the primary session and prints the reply as JSON", async () => {
    const state = await E2eState.create();
    state.fake.enqueue({
      text: "in-process answer",
      usage: { prompt_tokens: 40, completion_tokens: 3, total_tokens: 43 },
    });
    const run = await state.cli(["agent", "-m", "no gateway here", "--json"]);
    expect(run.code, run.stderr).toBe(0);
    const reply = JSON.parse(run.stdout) as {
      payloads: { text: string }[];
      meta: { stopReason: string; model: string; sessionKey: string; usage: { totalTokens: number } };
    };
    expect(reply.payloads).toEqual([{ text: "in-process answer" }]);
    expect(reply.meta).toMatchObject({ stopReason: "end", model: "fake-model", sessionKey: "main" });
    expect(reply.meta.usage.totalTokens).toBe(43);
    const entry = (await state.readStore()).main!;
    expect(entry).toMatchObject({ contextTokens: 40, model: "fake-model" });
    const messages = await state.messages(entry.sessionId);
    expect(messages.map((m) => [m.message.role, m.message.content, m.meta?.channel])).toEqual([
      ["user", "no gateway here", "cli"],
      ["assistant", "in-process answer", "cli"],
    ]);
  });

  it("exits 1 when the turn fails, and 2 without a message", async () => {
    const state = await E2eState.create();
    state.fake.enqueue({ status: 400, errorMessage: "the model refused the request" });
    const failed = await state.cli(["agent", "-m", "hello"]);
    expect(failed.code).toBe(1);
    expect(failed.stdout).toContain("⚠️");
    const usage = await state.cli(["agent"]);
    expect(usage.code).toBe(2);
    expect(usage.stderr).toContain("--message");
  });
});
