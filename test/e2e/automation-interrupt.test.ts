import { readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import type { ChatRequestBody, FakeReply } from "../fakes/openai-server.js";
import { settle } from "../fault/settle.js";
import { cleanupAll, E2eState } from "./harness.js";

/**
 * Who ends a turn (docs/tools.md, "Who starts a turn"), through the real binary: a person who writes while an
 * automated turn (a webhook's, a reminder's) runs a slow tool batch ends that turn after the batch — no further model call for
 * it, the person's turn runs next and its first model request carries the note that the automated turn stopped
 * unfinished; the automated turn's record ends `interrupted` and is not resumed after a restart.
 */

/** The webhook's first batch: runs (counted in `runs`) until the test creates `go`. */
const slowTool = (dir: string) =>
  `echo run >> '${join(dir, "runs")}'; while [ ! -e '${join(dir, "go")}' ]; do sleep 0.02; done; echo batch-one`;

/** What the fake model was asked for, by the last message of the request. */
function model(dir: string) {
  return (body: ChatRequestBody): FakeReply => {
    const last = body.messages.at(-1);
    const text = String(last?.content ?? "");
    if (last?.role === "user" && text.includes("slow work"))
      return { toolCalls: [{ name: "bash", arguments: { command: slowTool(dir) } }] };
    // The automated turn's second step: never asked for when a person ended it after its first batch.
    if (last?.role === "tool" && text.includes("batch-one"))
      return {
        toolCalls: [{ name: "bash", arguments: { command: `echo step-two >> '${join(dir, "runs")}'` } }],
      };
    return { text: `answer: ${text}` };
  };
}

describe("e2e: a person's message ends an automated turn after its tool batch", () => {
  afterEach(cleanupAll);

  it("a webhook's turn in a slow batch: alice writes, the batch finishes, no further call; her turn carries the note; not resumed after a restart", async () => {
    const state = await E2eState.create({
      config: { webhooks: { ci: { session: "main", tools: ["bash"] } } },
    });
    state.fake.setDefault(model(state.dir));
    const gw = await state.startGateway();
    const events = await gw.events("main");
    let hookJid = "";
    try {
      const hook = await gw.call<{ journalId: string }>("POST", "/hooks/ci", {
        text: "build failed: slow work",
      });
      expect(hook.status).toBe(202);
      hookJid = hook.body.journalId;
      await events.waitFor(
        (e) => e.type === "tool-call" && String(e.data.arguments).includes("batch-one"),
        "the webhook turn's slow tool call",
      );
    } finally {
      events.close();
    }
    // Accepted (and queued behind the webhook's turn) before the batch can finish.
    const acked = await gw.echo({ chatId: "chat-alice", senderId: "alice", text: "hi there" });
    expect(acked.status).toBeLessThan(300);
    await writeFile(join(state.dir, "go"), "");
    await gw.stderr.waitFor(/automated turn ended after its tool batch: a person wrote/);
    expect(await settle(gw, state), "open journal records once the gateway settled").toBe(0);

    // Two model calls: the webhook's first, then alice's; the automated turn made none after its batch.
    const requests = state.fake.requests.map((r) => r.body.messages);
    expect(requests).toHaveLength(2);
    const aliceFirst = requests[1] ?? [];
    const note = aliceFirst.findIndex(
      (m) => m.role === "user" && String(m.content).includes("(webhook) stopped unfinished"),
    );
    expect(note, "the note in alice's first model request").toBeGreaterThan(0);
    // The note sits after the batch's result and before alice's message.
    expect(aliceFirst[note - 1]).toMatchObject({ role: "tool" });
    expect(String(aliceFirst.at(-1)?.content)).toContain("hi there");
    expect((await gw.outbox()).map((o) => o.text)).toEqual([`answer: ${String(aliceFirst.at(-1)?.content)}`]);
    expect(gw.stderr.text()).toMatch(/automated turn ended .*source=webhook .*by=echo-transport:alice/);
    // The webhook's record ends `interrupted` (alice's `replied`).
    const ends = (await readFile(join(state.dir, "journal", "inbound.jsonl"), "utf8"))
      .split("\n")
      .filter((line) => line.includes('"op":"end"'))
      .map((line) => JSON.parse(line) as { jid: string; outcome: string });
    expect(ends.find((e) => e.jid === hookJid)?.outcome).toBe("interrupted");
    expect(ends.map((e) => e.outcome).sort()).toEqual(["interrupted", "replied"]);
    await gw.stop();

    // After a restart nothing resumes the interrupted turn: no model call, the slow tool and step two never run.
    const second = await state.startGateway();
    expect(await settle(second, state), "open journal records after the restart").toBe(0);
    expect(state.fake.requests).toHaveLength(2);
    expect((await readFile(join(state.dir, "runs"), "utf8")).trim().split("\n")).toEqual(["run"]);
    await second.stop();
  });

  it("a reminder's firing in a slow batch: alice writes, it ends after the batch, counts as done and fires no more", async () => {
    const state = await E2eState.create({ allowFrom: ["alice"] });
    state.fake.setDefault(model(state.dir));
    const gw = await state.startGateway();
    // The session's chat (the reminder answers there), then a reminder set by hand (the owner's tools: bash).
    const hello = await gw.echo({ chatId: "chat-r", senderId: "alice", text: "hello" }, { wait: true });
    expect(hello.status).toBe(200);
    const events = await gw.events("main");
    try {
      const add = await state.cli(["reminders", "add", "1s", "slow", "work"]);
      expect(add.code, add.stderr).toBe(0);
      await events.waitFor(
        (e) => e.type === "tool-call" && String(e.data.arguments).includes("batch-one"),
        "the reminder turn's slow tool call",
      );
    } finally {
      events.close();
    }
    const acked = await gw.echo({ chatId: "chat-r", senderId: "alice", text: "are you there" });
    expect(acked.status).toBeLessThan(300);
    await writeFile(join(state.dir, "go"), "");
    expect(await settle(gw, state), "open journal records once the gateway settled").toBe(0);
    expect(gw.stderr.text()).toMatch(/automated turn ended .*source=reminder .*by=echo-transport:alice/);
    // hello, the firing's first call, alice's turn with the note; nothing more of the firing.
    const requests = state.fake.requests.map((r) => r.body.messages);
    expect(requests).toHaveLength(3);
    expect(
      requests[2]?.some(
        (m) => m.role === "user" && String(m.content).includes("(reminder) stopped unfinished"),
      ),
      "the note in alice's first model request",
    ).toBe(true);
    expect((await gw.outbox()).map((o) => o.chatId)).toEqual(["chat-r", "chat-r"]);
    await gw.stop();

    const second = await state.startGateway();
    expect(await settle(second, state), "open journal records after the restart").toBe(0);
    const list = await state.cli(["reminders", "list", "--json"]);
    expect(JSON.parse(list.stdout).reminders).toEqual([]);
    expect(state.fake.requests).toHaveLength(3);
    expect((await readFile(join(state.dir, "runs"), "utf8")).trim().split("\n")).toEqual(["run"]);
    await second.stop();
  });
});
