import { readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { builtinTools } from "../src/agent/tools/index.js";
import { done, startTestGateway, type TestGateway } from "./helpers/gateway-harness.js";

/**
 * Who ends a turn, in the gateway (docs/tools.md, "Who starts a turn"): an automated turn (here a reminder handed
 * in by the core) gives way after its tool batch to the owner or an allowed person, never to an untrusted one. The
 * test transport's owner is alice, bob is allowed, carol is let in untrusted.
 */
describe("gateway: a person's message and a running automated turn", () => {
  let t: TestGateway | undefined;
  afterEach(async () => {
    await t?.close();
    t = undefined;
  });

  /** A batch that runs until the test creates `go` in the state dir. */
  const slow = (dir: string) => `while [ ! -e '${join(dir, "go")}' ]; do sleep 0.02; done; echo batch-one`;

  async function automatedTurnInSlowBatch(): Promise<TestGateway> {
    const gw = await startTestGateway({ tools: builtinTools(), chat: (chat) => chat.untrusted.add("carol") });
    await done(await gw.chat.inject({ text: "hello" }));
    await gw.idle();
    gw.fake.enqueue({ toolCalls: [{ name: "bash", arguments: { command: slow(gw.stateDir) } }] });
    await gw.gateway.submitInternal({
      sessionKey: "main",
      kind: "reminder",
      text: "check the disk",
      authority: "automated",
      allowedTools: ["bash"],
    });
    await gw.fake.waitForRequest(2);
    return gw;
  }

  const ends = async (dir: string): Promise<string[]> =>
    (await readFile(join(dir, "journal", "inbound.jsonl"), "utf8"))
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l) as { op: string; outcome?: string })
      .filter((r) => r.op === "end")
      .map((r) => r.outcome ?? "");

  it.each([
    ["the owner", "alice"],
    ["an allowed person", "bob"],
  ])(
    "%s writes: the automated turn ends after its batch; their turn runs next with the note",
    async (_, who) => {
      t = await automatedTurnInSlowBatch();
      const person = await t.chat.inject({ chatId: `c-${who}`, senderId: who, text: "what's up" });
      expect(person.status).toBe("accepted");
      await writeFile(join(t.stateDir, "go"), "");
      await done(person);
      await t.idle();
      // hello, the reminder's first call, the person's turn: the reminder made no call after its batch.
      expect(t.fake.requests).toHaveLength(3);
      const theirs = t.fake.requests[2]!.body.messages;
      expect(
        theirs.some((m) => m.role === "user" && String(m.content).includes("(reminder) stopped unfinished")),
      ).toBe(true);
      expect(await ends(t.stateDir)).toEqual(["replied", "interrupted", "replied"]);
    },
  );

  it("an untrusted person writes: the automated turn runs to its end; their message waits and gets no note", async () => {
    t = await automatedTurnInSlowBatch();
    t.fake.enqueue({ text: "disk is fine" });
    const carol = await t.chat.inject({ chatId: "c-carol", senderId: "carol", text: "hey bot" });
    expect(carol.status).toBe("accepted");
    await writeFile(join(t.stateDir, "go"), "");
    await done(carol);
    await t.idle();
    // The reminder's second call (after its batch) came before carol's turn.
    expect(t.fake.requests).toHaveLength(4);
    expect(t.fake.requests[2]!.body.messages.at(-1)).toMatchObject({ role: "tool" });
    expect(JSON.stringify(t.fake.requests[3]!.body.messages)).not.toContain("stopped unfinished");
    expect(await ends(t.stateDir)).toEqual(["replied", "replied", "replied"]);
  });
});
