import { readFile, rm, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import type { ChatRequestBody, FakeReply } from "../fakes/openai-server.js";
import { settle } from "../fault/settle.js";
import { cleanupAll, contentOf, E2eState, type GatewayProcess } from "./harness.js";

/**
 * A drained turn resumes by itself (docs/runtime.md, Stopping and restarting), through the real binary: a stop or
 * an in-process restart while a turn's tool loop runs and other messages wait behind it hands no message back to
 * the person ("send it again"); after the restart the drained turn is answered first, then each waiting message,
 * in the order they were accepted, each exactly once, and no tool runs twice.
 */

/** The first batch of a `long` message: runs (counted in `runs`) until the test creates `go`. */
const longTool = (dir: string) =>
  `echo run >> '${join(dir, "runs")}'; while [ ! -e '${join(dir, "go")}' ]; do sleep 0.02; done; echo batch-one`;

/**
 * The fake model: a person's message that says `long` gets two tool batches (the long one, then a quick one), any
 * other one an answer at once. The answer names every person's message since the last answer (a joined one too).
 */
function model(dir: string) {
  return (body: ChatRequestBody): FakeReply => {
    const messages = body.messages;
    let start = messages.length;
    while (start > 0) {
      const m = messages[start - 1];
      if (m?.role === "assistant" && !(m.tool_calls && m.tool_calls.length > 0)) break;
      start--;
    }
    const turn = messages.slice(start);
    const said = turn.filter((m) => m.role === "user").map((m) => String(m.content));
    const results = turn.filter((m) => m.role === "tool").length;
    if (said.some((t) => t.includes("long")) && results < 2) {
      const command = results === 0 ? longTool(dir) : "echo batch-two";
      return { toolCalls: [{ name: "bash", arguments: { command } }] };
    }
    return { text: `answer: ${said.join(" + ")}` };
  };
}

/**
 * Sends the message with `send` and resolves once the gateway runs the long tool (its `tool-call` event in
 * `main`). The event stream opens before the message goes, so a quick gateway's event is not missed.
 */
async function sendUntilLongToolRuns<R>(
  gw: GatewayProcess,
  send: () => Promise<R>,
): Promise<{ running: Promise<R> }> {
  const events = await gw.events("main");
  try {
    const running = send();
    running.catch(() => {});
    await events.waitFor(
      (e) => e.type === "tool-call" && String(e.data.arguments).includes("batch-one"),
      "the long tool's call",
    );
    return { running };
  } finally {
    events.close();
  }
}

/** Waits until every accepted message is answered (no open journal record); fails naming how many are left. */
async function allAnswered(gw: GatewayProcess, state: E2eState): Promise<void> {
  expect(await settle(gw, state), "open journal records once the gateway settled").toBe(0);
}

/**
 * The final answers of `main` in transcript order, each with the person's messages it answers (by their text),
 * and every person's message: what "answered once, in order" is checked on.
 */
/** An answer without the sender's name the model saw its message under ("answer: bob: hi" -> "answer: hi"). */
function unlabelled(text: string): string {
  return text.replace(/^answer: (alice|bob): /, "answer: ");
}

async function answers(state: E2eState): Promise<{ finals: string[]; users: string[] }> {
  const messages = await state.messages((await state.readStore()).main?.sessionId ?? "");
  return {
    // Two people write to main, so the model sees each message under its sender's name ("bob: …"); the fake
    // model echoes it, and the label is left out here.
    finals: messages.filter((m) => m.meta?.final === true).map((m) => unlabelled(contentOf(m))),
    users: messages.filter((m) => m.message.role === "user").map(contentOf),
  };
}

describe("e2e: a drained turn resumes before the messages that waited behind it", () => {
  afterEach(cleanupAll);

  it("SIGTERM during a tool loop with four messages waiting: nobody is asked to send again; all five answered once, in order", async () => {
    const state = await E2eState.create({ allowFrom: ["alice", "bob"] });
    state.fake.setDefault(model(state.dir));
    const first = await state.startGateway();
    const { running } = await sendUntilLongToolRuns(first, () =>
      first.echo({ chatId: "chat-a", senderId: "alice", text: "long 1" }, { wait: true }),
    );
    // Behind it: two of alice's (they would join at the batch boundary) and two of bob's.
    const waiting = ["alice 2", "bob 3", "alice 4", "bob 5"];
    for (const text of waiting) {
      const senderId = text.split(" ")[0] ?? "";
      const acked = await first.echo({ chatId: `chat-${senderId}`, senderId, text });
      expect(acked.status).toBeLessThan(300);
    }
    first.child.kill("SIGTERM");
    await first.stderr.waitFor(/INFO stopping signal=SIGTERM/);
    await writeFile(join(state.dir, "go"), "");
    expect((await running).body).toMatchObject({
      outcome: {
        stopReason: "aborted",
        payloads: [{ text: "The gateway is stopping; your message will be answered after it restarts." }],
      },
    });
    expect(await first.waitForExit()).toEqual({ code: 0, signal: null });
    expect(first.stderr.text()).toMatch(/turn drained .*why="after a tool batch"/);
    expect(first.stderr.text()).not.toMatch(/send it again/);

    const second = await state.startGateway();
    await allAnswered(second, state);
    const { finals, users } = await answers(state);
    expect(users).toEqual(["long 1", "alice 2", "bob 3", "alice 4", "bob 5"]);
    expect(finals).toEqual([
      "answer: long 1",
      "answer: alice 2",
      "answer: bob 3",
      "answer: alice 4",
      "answer: bob 5",
    ]);
    expect((await second.outbox()).map((o) => unlabelled(o.text))).toEqual(finals);
    // The long tool ran once: the resumed turn went on from its result.
    expect((await readFile(join(state.dir, "runs"), "utf8")).trim().split("\n")).toEqual(["run"]);
    expect(second.stderr.text()).not.toMatch(/send it again/);
  });

  it("three in-process restarts, each during a tool loop with messages waiting: each drained turn is answered first, nothing twice", async () => {
    const state = await E2eState.create({ allowFrom: ["alice", "bob"] });
    state.fake.setDefault(model(state.dir));
    const gw = await state.startGateway();
    const expected: string[] = [];
    const notices: unknown[] = [];
    for (let round = 1; round <= 3; round++) {
      await rm(join(state.dir, "go"), { force: true });
      const long = `long r${round}`;
      const { running } = await sendUntilLongToolRuns(gw, () =>
        gw.echo({ chatId: "chat-a", senderId: "alice", text: long }, { wait: true }),
      );
      const waiting = [`bob r${round}a`, `alice r${round}b`, `bob r${round}c`];
      for (const text of waiting) {
        const senderId = text.split(" ")[0] ?? "";
        expect((await gw.echo({ chatId: `chat-${senderId}`, senderId, text })).status).toBeLessThan(300);
      }
      const from = gw.stderr.length;
      expect((await gw.call("POST", "/api/restart")).status).toBe(202);
      await gw.stderr.waitFor(/restarting in-process/, { from });
      await writeFile(join(state.dir, "go"), "");
      notices.push((await running).body);
      await gw.stderr.waitFor(/INFO restarted reason=/, { from });
      await allAnswered(gw, state);
      expected.push(long, ...waiting);
    }
    for (const body of notices) {
      expect(body).toMatchObject({
        outcome: {
          stopReason: "aborted",
          payloads: [{ text: "The gateway is restarting; your message will be answered in a moment." }],
        },
      });
    }
    const { finals, users } = await answers(state);
    expect(users).toEqual(expected);
    expect(finals).toEqual(expected.map((t) => `answer: ${t}`));
    expect((await readFile(join(state.dir, "runs"), "utf8")).trim().split("\n")).toEqual([
      "run",
      "run",
      "run",
    ]);
    expect(gw.stderr.text()).not.toMatch(/send it again/);
    expect(gw.running).toBe(true);
  });
});
