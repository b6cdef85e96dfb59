import { afterEach, describe, expect, it } from "vitest";
import { done, startTestGateway, type TestGateway } from "./helpers/gateway-harness.js";

/**
 * The token fields of a session entry, as docs/files.md states them: `inputTokens`, `outputTokens` and
 * `totalTokens` are running totals over the session id (every model call of every turn, tool rounds included),
 * started again by a new session id; `contextTokens` is the prompt size of the last model call, not a total.
 */
describe("gateway: token counts on the session entry", () => {
  let t: TestGateway;
  afterEach(async () => {
    await t?.close();
  });

  const usage = (prompt: number, completion: number) => ({
    prompt_tokens: prompt,
    completion_tokens: completion,
    total_tokens: prompt + completion,
  });

  it("adds up every call over the session id; contextTokens is the last call's prompt; /new starts again", async () => {
    t = await startTestGateway();
    t.fake.enqueue({ text: "first", usage: usage(100, 10) });
    await done(await t.chat.inject({ text: "one" }));
    await t.idle();
    expect(await t.gateway.store.get("main")).toMatchObject({
      inputTokens: 100,
      outputTokens: 10,
      totalTokens: 110,
      contextTokens: 100,
    });

    // A turn of two model calls (a tool round, then the answer): both count, the context is the second prompt.
    t.fake.enqueue({
      toolCalls: [{ name: "bash", arguments: { command: "echo hi" } }],
      usage: usage(150, 7),
    });
    t.fake.enqueue({ text: "second", usage: usage(170, 3) });
    await done(await t.chat.inject({ text: "two" }));
    await t.idle();
    expect(await t.gateway.store.get("main")).toMatchObject({
      inputTokens: 100 + 150 + 170,
      outputTokens: 10 + 7 + 3,
      totalTokens: 110 + 157 + 173,
      contextTokens: 170,
      contextEstimated: false,
    });

    await done(await t.chat.inject({ text: "/new" }));
    t.fake.enqueue({ text: "fresh", usage: usage(40, 2) });
    await done(await t.chat.inject({ text: "three" }));
    await t.idle();
    expect(await t.gateway.store.get("main")).toMatchObject({
      inputTokens: 40,
      outputTokens: 2,
      totalTokens: 42,
      contextTokens: 40,
    });
  });
});
