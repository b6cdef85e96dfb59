import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { markerReply } from "../fakes/openai-server.js";
import { type AgentReply, cleanupAll, E2eState, type GatewayProcess, type HttpAnswer } from "./harness.js";

/**
 * Through the real binary: `clawdis chat --attach` watches a conversation held through the API (its tool calls
 * one line each), a watcher that goes away is dropped without the session noticing, and an idle session is
 * unloaded after `passivateAfterMinutes` and loaded from disk by the next message.
 */
describe("e2e: live attach and passivation", () => {
  let state: E2eState;
  let gw: GatewayProcess;

  beforeAll(async () => {
    // 0.02 minutes = 1.2 s idle, then the 5 s grace period.
    state = await E2eState.create({
      config: { inbound: { reply: { session: { passivateAfterMinutes: 0.02 } } } },
    });
    state.fake.setDefault(markerReply);
    gw = await state.startGateway();
  });
  afterAll(cleanupAll);

  const ok = (answer: HttpAnswer<AgentReply>) => {
    expect(answer.status, JSON.stringify(answer.body)).toBe(200);
    return answer.body;
  };

  it("chat --attach shows a conversation from the API: the person's message, each tool call, the reply", async () => {
    const watcher = state.spawn(["chat", "--attach", "--filter", "text,toolCalls"]);
    await watcher.stdout.waitFor("watching session main (filter: text,toolCalls)");
    const reply = ok(await gw.agent("list it [[bash:echo attach-marker-7]]"));
    expect(reply.meta.stopReason).toBe("end");
    await watcher.stdout.waitFor("⚙ bash");
    await watcher.stdout.waitFor("echo: list it [[bash:echo attach-marker-7]]");
    const out = watcher.stdout.text();
    expect(out).toContain("› list it [[bash:echo attach-marker-7]]");
    expect(out).toMatch(/⚙ bash \{"command":"echo attach-marker-7"\}/);
    // The filter leaves out what was not asked for (usage lines).
    expect(out).not.toContain("(tokens:");

    // The watcher goes away; the session does not notice: the next message is answered as usual.
    watcher.child.kill("SIGKILL");
    await watcher.waitForExit();
    expect(ok(await gw.agent("after the watcher left")).payloads).toEqual([
      { text: "echo: after the watcher left" },
    ]);
  });

  it("--filter with an unknown name is refused with exit 2 and the known names", async () => {
    const result = await state.cli(["chat", "--attach", "--filter", "txt"]);
    expect(result.code).toBe(2);
    expect(result.stdout + result.stderr).toContain("known: text, textStreaming");
  });

  it("an idle session is unloaded after passivateAfterMinutes and the next message loads it from disk", async () => {
    ok(await gw.agent("remember the word plum"));
    // Only what the log says after this exchange counts.
    const from = gw.stderr.text().length;
    await gw.stderr.waitFor(
      /idle session unloaded from memory.*main|main.*idle session unloaded from memory/,
      {
        from,
      },
    );
    const before = state.fake.requests.length;
    ok(await gw.agent("which word?"));
    const request = state.fake.requests[before]!.body.messages.map((m) => m.content);
    expect(request).toContain("remember the word plum");
  });
});
