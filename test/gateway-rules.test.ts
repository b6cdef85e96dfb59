import { readFileSync } from "node:fs";
import { mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import type { ToolDefinition } from "../src/plugin-api/types.js";
import { type FakeOpenAI, startFakeOpenAI } from "./fakes/openai-server.js";
import { done, startTestGateway, type TestGateway } from "./helpers/gateway-harness.js";

/**
 * Rules of admission and routing that a mutation review found unguarded (issue 7): the journal's accept is on
 * disk before `receive` resolves; a denied sender leaves no record a restart could answer; replies go to the
 * chat their message came from although direct chats share `main`.
 */

interface JournalLine {
  op: string;
  jid?: string;
  msg?: { messageId?: string; senderId?: string };
}

/** The journal's lines as they are on disk right now (read synchronously: nothing can run in between). */
function journalLinesNow(stateDir: string): JournalLine[] {
  const text = readFileSync(join(stateDir, "journal", "inbound.jsonl"), "utf8");
  return text
    .split("\n")
    .filter((line) => line.trim().length > 0)
    .map((line) => JSON.parse(line) as JournalLine);
}

function gate(): { promise: Promise<void>; open: () => void } {
  let open!: () => void;
  const promise = new Promise<void>((r) => {
    open = r;
  });
  return { promise, open };
}

describe("gateway rules: the journal and denied senders", () => {
  let t: TestGateway | undefined;
  let stateDir: string | undefined;
  let fake: FakeOpenAI | undefined;
  afterEach(async () => {
    await t?.close();
    t = undefined;
    await fake?.close();
    fake = undefined;
    if (stateDir) await rm(stateDir, { recursive: true, force: true });
    stateDir = undefined;
  });

  it("the accept line with its journal id is on disk when receive resolves accepted", async () => {
    t = await startTestGateway();
    const result = await t.chat.inject({ text: "write me down", messageId: "durable-1" });
    const lines = journalLinesNow(t.stateDir);
    const outcome = await done(result);
    expect(outcome.stopReason).toBe("end");
    if (result.status !== "accepted") return;
    expect(lines).toContainEqual(
      expect.objectContaining({
        op: "accept",
        jid: result.journalId,
        msg: expect.objectContaining({ messageId: "durable-1", senderId: "alice" }),
      }),
    );
  });

  it("a denied sender leaves no journal record, and a restart answers nothing and calls no model", async () => {
    stateDir = await mkdtemp(join(tmpdir(), "clawdis-rules-"));
    fake = await startFakeOpenAI();
    const first = await startTestGateway({ stateDir, fake });
    t = first;
    const denied = await first.chat.inject({
      text: "let me in",
      senderId: "mallory",
      chatId: "c-m",
      messageId: "from-mallory",
    });
    expect(denied).toEqual({ status: "denied", reason: "not in the test allowlist" });
    expect(first.gateway.journal.openCount()).toBe(0);
    t = undefined;
    await first.close();
    // After a clean stop everything the journal holds is on disk.
    const journal = await readFile(join(stateDir, "journal", "inbound.jsonl"), "utf8");
    expect(journal).not.toContain("from-mallory");
    expect(journal).not.toContain("let me in");

    const second = await startTestGateway({ stateDir, fake });
    t = second;
    expect(second.logs.map((l) => l.message)).not.toContain(
      "finishing messages accepted before the last stop",
    );
    // A replayed record would run first in main's queue: once alice is answered, anything replayed was too.
    await done(await second.chat.inject({ text: "anyone there?", messageId: "after-restart" }));
    expect(fake.requests).toHaveLength(1);
    expect(fake.requests[0]!.body.messages.map((m) => m.content)).not.toContain("let me in");
    expect(second.chat.textsTo("c-m")).toEqual([]);
    expect(second.chat.sent.map((m) => m.chatId)).toEqual(["c-alice"]);
  });
});

describe("gateway rules: replies go to the chat the message came from", () => {
  let t: TestGateway | undefined;
  afterEach(async () => {
    await t?.close();
    t = undefined;
  });

  it("two people in two direct chats share main; a message of the second during the first's turn is answered in its own chat", async () => {
    const started = gate();
    const release = gate();
    const wait: ToolDefinition = {
      name: "wait",
      description: "waits until the test lets it finish",
      parameters: { type: "object", properties: {} },
      async execute() {
        started.open();
        await release.promise;
        return { ok: true, output: "waited" };
      },
    };
    t = await startTestGateway({ tools: [wait] });
    t.fake.enqueue({ toolCalls: [{ name: "wait", arguments: {} }] }, { text: "for alice" });
    const alice = await t.chat.inject({ text: "alice asks", chatId: "c-alice", senderId: "alice" });
    // Bob writes while alice's turn is at a tool-batch boundary (where same-person messages would join).
    await started.promise;
    const bob = await t.chat.inject({ text: "bob asks", chatId: "c-bob", senderId: "bob" });
    release.open();
    const [a, b] = await Promise.all([done(alice), done(bob)]);
    expect(a).toMatchObject({ sessionKey: "main", payloads: [{ text: "for alice" }] });
    // Two people share main: the model is told who wrote each direct message (the fake echoes the last).
    expect(b).toMatchObject({ sessionKey: "main", payloads: [{ text: "echo: Bob: bob asks" }] });
    expect(t.chat.textsTo("c-alice")).toEqual(["for alice"]);
    expect(t.chat.textsTo("c-bob")).toEqual(["echo: Bob: bob asks"]);
    expect(t.chat.sent.map((m) => [m.chatId, m.replyToMessageId])).toEqual([
      ["c-alice", "m1"],
      ["c-bob", "m2"],
    ]);
    // One session for both: bob's turn saw alice's exchange.
    const users = (await t.transcript("main")).filter((m) => m.message.role === "user");
    expect(users.map((m) => [m.meta?.chatId, m.message.content])).toEqual([
      ["c-alice", "alice asks"],
      ["c-bob", "bob asks"],
    ]);

    // And the other way round: alice again after bob, while bob's chat was the last one main heard from.
    await done(await t.chat.inject({ text: "alice again", chatId: "c-alice", senderId: "alice" }));
    expect(t.chat.textsTo("c-alice")).toEqual(["for alice", "echo: Alice: alice again"]);
    expect(t.chat.textsTo("c-bob")).toEqual(["echo: Bob: bob asks"]);
  });
});
