import { readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { builtinTools } from "../src/agent/tools/index.js";
import type { JournalMessageV2 } from "../src/sessions/journal-record.js";
import { done, startTestGateway, type TestGateway } from "./helpers/gateway-harness.js";

/**
 * Reminders in the gateway (docs/tools.md, Reminders): the `remind` tool sets one for the turn's session and chat;
 * at its time it fires as an automated turn of its own (kind "reminder"), with its setter's tools, answered in
 * that chat. The test transport's owner is alice; bob is allowed.
 */
describe("gateway: reminders", () => {
  let t: TestGateway | undefined;
  afterEach(async () => {
    await t?.close();
    t = undefined;
  });

  async function accepted(stateDir: string): Promise<JournalMessageV2[]> {
    const text = await readFile(join(stateDir, "journal", "inbound.jsonl"), "utf8");
    return text
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l) as { op: string; msg: JournalMessageV2 })
      .filter((r) => r.op === "accept")
      .map((r) => r.msg);
  }

  /** Moves the clock, then waits for the look at the schedule it started (and the firings it handed in). */
  async function tick(ms: number): Promise<void> {
    await t!.gateway.reminders.idle();
    t!.clock.advance(ms);
    await t!.gateway.reminders.idle();
  }

  const offered = (n: number): string[] =>
    (t!.fake.requests[n]!.body.tools ?? []).map((tool) => tool.function.name).sort();

  it("remind sets one for this chat; at its time it is its own automated turn, with the owner's tools", async () => {
    t = await startTestGateway({ tools: builtinTools() });
    t.fake.enqueue(
      { toolCalls: [{ name: "remind", arguments: { when: "90s", text: "stretch your legs" } }] },
      { text: "I will remind you." },
    );
    await done(await t.chat.inject({ text: "remind me in 90 seconds to stretch" }));
    const toolResult = t.fake.requests[1]!.body.messages.find((m) => m.role === "tool");
    expect(String(toolResult?.content)).toMatch(/^reminder set: r1 {2}next .*stretch your legs/);
    const file = JSON.parse(await readFile(join(t.stateDir, "reminders.json"), "utf8"));
    expect(file.reminders).toEqual([
      expect.objectContaining({
        id: "r1",
        session: "main",
        route: { channel: "chat", chatId: "c-alice", chatType: "direct" },
        setBy: { authority: "owner", channel: "chat", senderId: "alice" },
      }),
    ]);

    await tick(30_000);
    await tick(30_000);
    await tick(29_000);
    expect(t.fake.requests).toHaveLength(2);
    t.fake.enqueue({ text: "Time to stretch!" });
    await tick(1_000);
    await t.chat.waitForSent(2);
    await t.idle();
    expect(t.chat.textsTo("c-alice")).toEqual(["I will remind you.", "Time to stretch!"]);
    const request = t.fake.requests[2]!.body.messages.at(-1);
    expect(request).toMatchObject({ role: "user", content: "[reminder] stretch your legs" });
    // The owner's tools, by name (bash too: it was the owner's), confined as any automated turn.
    expect(offered(2)).toEqual([
      "bash",
      "edit_file",
      "job_kill",
      "job_output",
      "job_status",
      "read_file",
      "remind",
      "send_file",
      "write_file",
    ]);
    const internal = (await accepted(t.stateDir)).filter((m) => m.internal !== undefined);
    expect(internal).toEqual([
      expect.objectContaining({
        authority: "automated",
        internal: { kind: "reminder" },
        messageId: expect.stringMatching(/^internal:reminder:r1:\d+:\d+$/),
      }),
    ]);
    // Fired: gone from the file.
    expect(JSON.parse(await readFile(join(t.stateDir, "reminders.json"), "utf8")).reminders).toEqual([]);
  });

  it("one set by an allowed person gets that person's tools, at most the owner's", async () => {
    t = await startTestGateway({
      tools: builtinTools(),
      config: {
        inbound: { reply: { agent: { tools: { people: { "chat:bob": ["read_file", "remind"] } } } } },
      },
    });
    t.fake.enqueue(
      { toolCalls: [{ name: "remind", arguments: { when: "5s", text: "check the oven" } }] },
      { text: "ok" },
    );
    await done(await t.chat.inject({ text: "remind me", senderId: "bob", chatId: "c-bob" }));
    t.fake.enqueue({ text: "The oven!" });
    await tick(5_000);
    await t.chat.waitForSent(2);
    await t.idle();
    expect(t.chat.textsTo("c-bob")).toEqual(["ok", "The oven!"]);
    expect(offered(2)).toEqual(["read_file", "remind"]);
  });

  it("a bad time is the model's error, and nothing is written", async () => {
    t = await startTestGateway();
    t.fake.enqueue(
      { toolCalls: [{ name: "remind", arguments: { when: "someday", text: "x" } }] },
      { text: "sorry" },
    );
    await done(await t.chat.inject({ text: "remind me someday" }));
    const toolResult = t.fake.requests[1]!.body.messages.find((m) => m.role === "tool");
    expect(String(toolResult?.content)).toMatch(/^remind: "someday" is not a time/);
    await expect(readFile(join(t.stateDir, "reminders.json"), "utf8")).rejects.toThrow(/ENOENT/);
  });

  it("a reminder due while a person's turn runs waits for its own turn and never joins it", async () => {
    t = await startTestGateway();
    await t.gateway.reminders.add({
      when: "2s",
      text: "drink water",
      route: { channel: "chat", chatId: "c-alice", chatType: "direct" },
    });
    t.fake.enqueue({ hang: "before-headers", text: "answer to the person" });
    const person = await t.chat.inject({ text: "a long question" });
    await t.fake.waitForRequest(1);
    t.fake.enqueue({ text: "reminder answered" });
    await tick(2_000);
    // The firing was journaled (accepted) while the person's turn still runs.
    expect((await accepted(t.stateDir)).map((m) => m.internal?.kind)).toEqual([undefined, "reminder"]);
    t.fake.release();
    await done(person);
    await t.chat.waitForSent(2);
    await t.idle();
    expect(t.chat.textsTo("c-alice")).toEqual(["answer to the person", "reminder answered"]);
    expect(t.fake.requests).toHaveLength(2);
    const lastUser = (n: number) =>
      t!.fake.requests[n]!.body.messages.filter((m) => m.role === "user").map((m) => m.content);
    expect(lastUser(0)).toEqual(["a long question"]);
    expect(lastUser(1)).toEqual(["a long question", "[reminder] drink water"]);
  });

  it("a firing journaled but not yet marked in the file (a kill between the two) is not run again", async () => {
    t = await startTestGateway();
    await done(await t.chat.inject({ text: "hello" }));
    const path = join(t.stateDir, "reminders.json");
    await t.gateway.reminders.add({ when: "3s", text: "once only" });
    const written = await readFile(path, "utf8");
    await tick(3_000);
    await t.chat.waitForSent(2);
    await t.idle();
    expect(JSON.parse(await readFile(path, "utf8")).reminders).toEqual([]);
    // The file as it was before the firing was marked: the same reminder, due for the same slot.
    await writeFile(path, written);
    await tick(30_000);
    await t.idle();
    expect(JSON.parse(await readFile(path, "utf8")).reminders).toEqual([]);
    expect(t.chat.textsTo("c-alice")).toEqual(["echo: hello", "echo: [reminder] once only"]);
    expect(t.fake.requests).toHaveLength(2);
    expect((await accepted(t.stateDir)).filter((m) => m.internal)).toHaveLength(1);
  });
});
