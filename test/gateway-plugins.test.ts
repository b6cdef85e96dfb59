import { afterEach, describe, expect, it } from "vitest";
import webhookPlugin from "../plugins/webhook/index.js";
import { definePlugin, PLUGIN_API_VERSION } from "../src/plugin-api/index.js";
import { done, startTestGateway, type TestGateway } from "./helpers/gateway-harness.js";

describe("gateway: what plugins add", () => {
  let t: TestGateway;
  afterEach(async () => {
    await t?.close();
  });

  it("offers a plugin's tools to the model and runs them", async () => {
    const calls: Record<string, unknown>[] = [];
    const weather = definePlugin({
      apiVersion: PLUGIN_API_VERSION,
      id: "weather",
      create: () => ({
        tools: [
          {
            name: "get_weather",
            description: "The weather in a city",
            parameters: { type: "object", properties: { city: { type: "string" } }, required: ["city"] },
            async execute(args) {
              calls.push(args);
              return { ok: true, output: `sunny in ${String(args.city)}` };
            },
          },
        ],
      }),
    });
    t = await startTestGateway({ plugins: [weather] });
    t.fake.enqueue(
      { toolCalls: [{ name: "get_weather", arguments: { city: "Oslo" } }] },
      { text: "It is sunny." },
    );
    const outcome = await done(await t.chat.inject({ text: "weather in Oslo?" }));
    expect(outcome.payloads).toEqual([{ text: "It is sunny." }]);
    expect(t.fake.requests[0]!.body.tools?.map((tool) => tool.function.name)).toEqual([
      "remind",
      "get_weather",
      "spawn_agent",
      "check_agent_run",
    ]);
    expect(calls).toEqual([{ city: "Oslo" }]);
    const tool = (await t.transcript()).find((m) => m.message.role === "tool");
    expect(tool?.message.content).toBe("sunny in Oslo");
  });

  it("the send thread runs only for a plugin that sends through it (its definition's sendThread)", async () => {
    const plain = definePlugin({ apiVersion: PLUGIN_API_VERSION, id: "plain", create: () => ({}) });
    t = await startTestGateway({ plugins: [plain], listen: true });
    expect(t.gateway.sendThreadStarted).toBe(false);
    await t.close();
    const confirming = definePlugin({
      apiVersion: PLUGIN_API_VERSION,
      id: "confirming",
      sendThread: true,
      create: () => ({}),
    });
    t = await startTestGateway({ plugins: [plain, confirming], listen: true });
    expect(t.gateway.sendThreadStarted).toBe(true);
  });

  it("webhook input over HTTP goes to its configured session and waits for its own turn", async () => {
    t = await startTestGateway({
      plugins: [webhookPlugin],
      listen: true,
      config: { webhooks: { deploy: { session: "main", token: "hook-secret-123" } } },
    });
    const address = t.gateway.listeningAddress()!;
    const url = `http://${address.host}:${address.port}/hooks/deploy`;
    // A turn of the person is running when the hook fires.
    t.fake.enqueue({ text: "first", hang: "before-headers" });
    const running = await t.chat.inject({ text: "busy with this" });
    await t.fake.waitForRequest(1);
    const denied = await fetch(url, {
      method: "POST",
      body: "x",
      headers: { authorization: "Bearer wrong" },
    });
    expect(denied.status).toBe(401);
    const hook = await fetch(url, {
      method: "POST",
      headers: { authorization: "Bearer hook-secret-123", "content-type": "application/json" },
      body: JSON.stringify({ text: "deploy finished", messageId: "d-1" }),
    });
    expect(hook.status).toBe(202);
    expect(t.gateway.isBusy("main")).toBe(true);
    t.fake.release();
    await done(running);
    await t.fake.waitForRequest(2);
    // The hook's message was not folded into the person's turn: it got a model call of its own.
    const firstUsers = t.fake.requests[0]!.body.messages.filter((m) => m.role === "user").map(
      (m) => m.content,
    );
    expect(firstUsers).toEqual(["busy with this"]);
    const secondUsers = t.fake.requests[1]!.body.messages.filter((m) => m.role === "user").map(
      (m) => m.content,
    );
    expect(secondUsers.at(-1)).toBe("deploy finished");
  });
});
