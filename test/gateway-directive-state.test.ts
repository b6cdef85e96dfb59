import { afterEach, describe, expect, it } from "vitest";
import { done, startTestGateway, type TestGateway } from "./helpers/gateway-harness.js";

/** `/think` and `/verbose` alone answer the session's current setting, and change nothing. */
describe("gateway: a directive without a value", () => {
  let t: TestGateway | undefined;
  afterEach(async () => {
    await t?.close();
    t = undefined;
  });

  it("/think and /verbose alone show the current setting, before and after it is set, without a model call", async () => {
    t = await startTestGateway();
    const ask = async (text: string) => (await done(await t!.chat.inject({ text }))).payloads;
    expect(await ask("/think")).toEqual([
      { text: "Thinking level: off. Change it with /think off|minimal|low|medium|high." },
    ]);
    expect(await ask("/think medium")).toEqual([{ text: "Thinking level set to medium." }]);
    expect(await ask("/think")).toEqual([
      { text: "Thinking level: medium. Change it with /think off|minimal|low|medium|high." },
    ]);
    expect(await ask("/verbose")).toEqual([{ text: "Verbose: off. Change it with /verbose on|off." }]);
    expect(await ask("/verbose on")).toEqual([{ text: "Verbose set to on." }]);
    expect(await ask("/verbose")).toEqual([{ text: "Verbose: on. Change it with /verbose on|off." }]);
    expect(t.fake.requests).toHaveLength(0);
    expect((await t.gateway.store.get("main"))?.thinkingLevel).toBe("medium");
  });
});
