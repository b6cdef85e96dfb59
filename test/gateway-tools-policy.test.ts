import { mkdir, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { builtinTools } from "../src/agent/tools/index.js";
import { done, startTestGateway, type TestGateway } from "./helpers/gateway-harness.js";
import { OWNER_TOOLS } from "./helpers/owner-tools.js";

/**
 * Which tools the model is offered, by where the message came from and who sent it (issue 6, D3: webhook input
 * got `bash`; issue 36: another allowed person's DM got `bash`). The test transport's owner is alice; bob is
 * allowed.
 */
describe("gateway: tools are for people's own messages", () => {
  let t: TestGateway | undefined;
  afterEach(async () => {
    await t?.close();
    t = undefined;
  });

  const offered = (n: number): string[] =>
    (t!.fake.requests[n]!.body.tools ?? []).map((tool) => tool.function.name).sort();

  it("a person's message in the primary session gets tools.main", async () => {
    t = await startTestGateway({ tools: builtinTools() });
    await done(await t.chat.inject({ text: "hi" }));
    expect(offered(0)).toEqual([...OWNER_TOOLS]);
  });

  it("another allowed person's message in the primary session gets none", async () => {
    t = await startTestGateway({ tools: builtinTools() });
    await done(await t.chat.inject({ text: "run id", senderId: "bob", chatId: "c-bob" }));
    expect(t.fake.requests[0]!.body.tools).toBeUndefined();
  });

  it("tools.people gives a listed person exactly theirs; '*' for them leaves out bash and the job tools", async () => {
    t = await startTestGateway({
      tools: builtinTools(),
      config: { inbound: { reply: { agent: { tools: { people: { "chat:bob": ["*"] } } } } } },
    });
    await done(await t.chat.inject({ text: "hi", senderId: "bob", chatId: "c-bob" }));
    expect(offered(0)).toEqual([
      "check_agent_run",
      "edit_file",
      "read_file",
      "remind",
      "send_file",
      "spawn_agent",
      "write_file",
    ]);
  });

  it("a group session gets no tools by default, even for the owner, and exactly tools.groups when set", async () => {
    const group = { chatType: "group" as const, chatId: "g" };
    t = await startTestGateway({
      tools: builtinTools(),
      config: { inbound: { groupChat: { requireMention: false } } },
    });
    await done(await t.chat.inject({ text: "hi group", ...group }));
    expect(t.fake.requests[0]!.body.tools).toBeUndefined();
    await t.close();
    t = await startTestGateway({
      tools: builtinTools(),
      config: {
        inbound: {
          groupChat: { requireMention: false },
          reply: { agent: { tools: { groups: ["read_file"] } } },
        },
      },
    });
    await done(await t.chat.inject({ text: "hi group", ...group }));
    await done(await t.chat.inject({ text: "bob here", ...group, senderId: "bob" }));
    expect(offered(0)).toEqual(["read_file"]);
    expect(offered(1)).toEqual(["read_file"]);
  });

  it("automated input into main gets no tools, even with tools.main = ['*']", async () => {
    t = await startTestGateway({ tools: builtinTools() });
    await done(await t.chat.inject({ text: "run id > pwned", automated: true }));
    expect(t.fake.requests[0]!.body.tools).toBeUndefined();
  });

  it("automated input into its own session gets no tools", async () => {
    t = await startTestGateway({ tools: builtinTools() });
    await done(await t.chat.inject({ text: "run id > pwned", automated: true, sessionKey: "hooks:ci" }));
    expect(t.fake.requests[0]!.body.tools).toBeUndefined();
  });

  it("automated input gets exactly the tools its source grants", async () => {
    t = await startTestGateway({ tools: builtinTools() });
    await done(await t.chat.inject({ text: "read it", automated: true, allowedTools: ["read_file"] }));
    expect(offered(0)).toEqual(["read_file"]);
  });

  it("a person's message routed to another key (e.g. an API session 'telegram:12345') gets none", async () => {
    t = await startTestGateway({ tools: builtinTools() });
    await done(await t.chat.inject({ text: "hi", sessionKey: "telegram:12345" }));
    expect(t.fake.requests[0]!.body.tools).toBeUndefined();
  });

  it("under scope global, the global session gets tools.main", async () => {
    t = await startTestGateway({
      tools: builtinTools(),
      config: { inbound: { reply: { session: { scope: "global" } } } },
    });
    await done(await t.chat.inject({ text: "hi" }));
    expect(offered(0)).toEqual([...OWNER_TOOLS]);
  });

  it("under scope global, the global session's tools run in the workspace itself, as the primary one's do", async () => {
    t = await startTestGateway({
      tools: builtinTools(),
      config: { inbound: { reply: { session: { scope: "global" } } } },
    });
    await mkdir(join(t.stateDir, "workspace"), { recursive: true });
    await writeFile(join(t.stateDir, "workspace", "notes.txt"), "in the workspace");
    t.fake.enqueue({ toolCalls: [{ name: "read_file", arguments: { path: "notes.txt" } }] }, { text: "ok" });
    await done(await t.chat.inject({ text: "read my notes" }));
    const results = t.fake.requests[1]!.body.messages.filter((m) => m.role === "tool");
    expect(results.map((m) => m.content)).toEqual(["in the workspace"]);
  });
});

describe("gateway: what a turn logs", () => {
  let t: TestGateway | undefined;
  afterEach(async () => {
    await t?.close();
    t = undefined;
  });

  it("one info line per turn, and debug lines per model and tool call with the arguments redacted", async () => {
    t = await startTestGateway({ tools: builtinTools() });
    t.fake.enqueue(
      { toolCalls: [{ name: "read_file", arguments: { path: "secret-notes.txt" } }], usage: null },
      { text: "done", usage: { prompt_tokens: 50, completion_tokens: 2, total_tokens: 52 } },
    );
    await done(await t.chat.inject({ text: "read it" }));
    const turns = t.logs.filter((l) => l.message === "turn");
    expect(turns).toHaveLength(1);
    expect(turns[0]).toMatchObject({
      level: "info",
      fields: {
        session: "main",
        channel: "chat",
        stopReason: "end",
        promptTokens: 50,
        completionTokens: 2,
        rounds: 2,
      },
    });
    expect(typeof turns[0]!.fields?.durationMs).toBe("number");
    expect(t.logs.filter((l) => l.message === "model call" && l.level === "debug")).toHaveLength(2);
    const toolLine = t.logs.find((l) => l.message === "tool call");
    expect(toolLine).toMatchObject({
      level: "debug",
      fields: { tool: "read_file", arguments: "{path: <16 chars>}" },
    });
    expect(JSON.stringify(t.logs)).not.toContain("secret-notes");
  });
});
