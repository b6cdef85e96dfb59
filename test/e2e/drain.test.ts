import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { cleanupAll, contentOf, E2eState, type GatewayProcess } from "./harness.js";

/** A bash command that runs until the test creates `file` (the tool under way when the drain begins). */
const waitFor = (file: string) => `while [ ! -e '${file}' ]; do sleep 0.02; done; echo batch-done`;

/**
 * Sends the message with `send` and waits until the gateway runs the bash tool call of its turn (its `tool-call`
 * event). The event stream opens before the message goes, so a quick gateway's event is not missed.
 */
async function sendUntilToolRuns<R>(
  gw: GatewayProcess,
  send: () => Promise<R>,
): Promise<{ running: Promise<R> }> {
  const events = await gw.events("main");
  try {
    const running = send();
    running.catch(() => {});
    await events.waitFor((e) => e.type === "tool-call", "the tool call of the turn");
    return { running };
  } finally {
    events.close();
  }
}

/**
 * The drain through the real binary (docs/runtime.md, Stopping and restarting): a stop or an in-process restart
 * while a tool runs lets that tool batch finish, starts no model call, tells the person in one line, and the turn
 * goes on by itself after the restart, answered exactly once.
 */
describe("e2e: drain during a tool loop", () => {
  afterEach(cleanupAll);

  it("SIGTERM during a tool batch: the batch ends, the person sees stopping, and after a restart the turn resumes, answered once", async () => {
    const state = await E2eState.create({ allowFrom: ["alice"] });
    const { fake } = state;
    const go = join(state.dir, "go");
    fake.enqueue({ toolCalls: [{ name: "bash", arguments: { command: waitFor(go) }, id: "call_1" }] });
    const first = await state.startGateway();
    const { running } = await sendUntilToolRuns(first, () =>
      first.echo(
        { chatId: "chat-drain", senderId: "alice", text: "run the long job", messageId: "drain-1" },
        { wait: true },
      ),
    );
    first.child.kill("SIGTERM");
    await first.stderr.waitFor(/INFO stopping signal=SIGTERM/);
    // The stop waits for the batch: the tool is let finish, then the turn ends without another model call.
    await writeFile(go, "");
    const told = await running;
    expect(told).toMatchObject({
      status: 200,
      body: {
        outcome: {
          stopReason: "aborted",
          payloads: [{ text: "The gateway is stopping; your message will be answered after it restarts." }],
        },
      },
    });
    expect(await first.waitForExit()).toEqual({ code: 0, signal: null });
    expect(fake.requests).toHaveLength(1);
    expect(first.stderr.text()).toMatch(/turn drained .*action=resume why="after a tool batch"/);

    fake.enqueue({ hang: "before-headers", text: "the long job is done" });
    const second = await state.startGateway();
    const events = await second.events("main");
    await fake.waitForRequest(2);
    // It goes on from the transcript: the tool's result is in the call, the tool did not run again.
    const resumed = fake.requests[1]!.body.messages;
    expect(resumed.at(-1)).toMatchObject({ role: "tool", tool_call_id: "call_1" });
    expect(String(resumed.at(-1)?.content)).toContain("batch-done");
    fake.release();
    await events.waitFor((e) => e.type === "message" && e.data.role === "assistant", "the resumed reply");
    events.close();
    expect((await second.outbox()).map((o) => [o.chatId, o.text, o.kind])).toEqual([
      ["chat-drain", "the long job is done", "reply"],
    ]);
    const sessionId = (await state.readStore()).main?.sessionId ?? "";
    const messages = await state.messages(sessionId);
    expect(messages.map((m) => [m.message.role, contentOf(m)])).toEqual([
      ["user", "run the long job"],
      ["assistant", "null"],
      ["tool", expect.stringContaining("batch-done")],
      ["assistant", "the long job is done"],
    ]);

    // Nothing is left to answer: a further restart sends nothing and calls no model.
    expect(await second.stop()).toEqual({ code: 0, signal: null });
    const third = await state.startGateway();
    expect((await third.call("GET", "/api/status")).body.openJournalRecords).toBe(0);
    expect(await third.outbox()).toEqual([]);
    expect(fake.requests).toHaveLength(2);
  });

  it("an in-process restart during a tool batch: restarting, the same process resumes the turn; /status says restarted", async () => {
    const state = await E2eState.create({ allowFrom: ["alice"] });
    const { fake } = state;
    const go = join(state.dir, "go");
    fake.enqueue(
      { toolCalls: [{ name: "bash", arguments: { command: waitFor(go) }, id: "call_1" }] },
      { hang: "before-headers", text: "done after the restart" },
    );
    const gw = await state.startGateway();
    const { running } = await sendUntilToolRuns(gw, () =>
      gw.echo(
        { chatId: "chat-restart", senderId: "alice", text: "long job", messageId: "restart-1" },
        { wait: true },
      ),
    );
    const from = gw.stderr.length;
    expect(await gw.call("POST", "/api/restart")).toMatchObject({ status: 202, body: { pid: gw.pid } });
    await gw.stderr.waitFor(/restarting in-process/, { from });
    await writeFile(go, "");
    expect((await running).body).toMatchObject({
      outcome: {
        stopReason: "aborted",
        payloads: [{ text: "The gateway is restarting; your message will be answered in a moment." }],
      },
    });
    await gw.stderr.waitFor(/INFO restarted reason=/, { from });
    // The new gateway listens again (same process) and answers the drained turn by itself.
    const events = await gw.events("main");
    await fake.waitForRequest(2);
    fake.release();
    await events.waitFor((e) => e.type === "message" && e.data.role === "assistant", "the resumed reply");
    events.close();
    expect(gw.running).toBe(true);
    expect(fake.requests).toHaveLength(2);
    expect(fake.requests[1]!.body.messages.at(-1)).toMatchObject({ role: "tool", tool_call_id: "call_1" });
    const finals = (await state.messages((await state.readStore()).main?.sessionId ?? "")).filter(
      (m) => m.meta?.final === true,
    );
    expect(finals.map(contentOf)).toEqual(["done after the restart"]);
    // Sent once the new gateway's first sends may go (its send thread runs: outbox.ts, holdUntil).
    await expect.poll(async () => (await gw.outbox()).map((o) => o.text)).toEqual(["done after the restart"]);
    const status = await gw.echo(
      { chatId: "chat-restart", senderId: "alice", text: "/status", messageId: "status-1" },
      { wait: true },
    );
    const statusText = (status.body as { outcome: { payloads: { text: string }[] } }).outcome.payloads[0]
      ?.text;
    expect(statusText?.split("\n")[1]).toMatch(/^restarted \d+s ago: requested over the API$/);
    expect((await gw.call("GET", "/api/status")).body.restarted).toMatchObject({
      reason: "requested over the API",
    });
  });
});
