import { mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { appendTranscript, makeHeader, newEntryId } from "../src/sessions/transcript.js";
import { type FakeOpenAI, startFakeOpenAI } from "./fakes/openai-server.js";
import { done, startTestGateway } from "./helpers/gateway-harness.js";

describe("gateway: stop and restart lose nothing and answer nothing twice", () => {
  let stateDir: string;
  let fake: FakeOpenAI;
  beforeEach(async () => {
    stateDir = await mkdtemp(join(tmpdir(), "clawdis-restart-"));
    fake = await startFakeOpenAI();
  });
  afterEach(async () => {
    await fake.close();
    await rm(stateDir, { recursive: true, force: true });
  });

  it("a turn stopped by shutdown tells the person, and is answered once after the next start", async () => {
    const first = await startTestGateway({ stateDir, fake });
    fake.enqueue({ hang: "before-headers" });
    const running = await first.chat.inject({ text: "are you there?", messageId: "keep-me" });
    await fake.waitForRequest(1);
    await first.close();
    const stopped = await done(running);
    expect(stopped.stopReason).toBe("aborted");
    expect(first.chat.textsTo("c-alice")).toEqual([
      "The gateway is stopping; your message will be answered after it restarts.",
    ]);

    const second = await startTestGateway({ stateDir, fake });
    await second.chat.waitForSent(1);
    await second.gateway.stop();
    expect(second.chat.textsTo("c-alice")).toEqual(["echo: are you there?"]);
    const users = (await second.transcript()).filter((m) => m.message.role === "user");
    expect(users.map((m) => m.message.content)).toEqual(["are you there?"]);
    // The message id is remembered: the chat app re-sending it is a duplicate, not a new turn.
    expect(await second.chat.inject({ text: "are you there?", messageId: "keep-me" })).toEqual({
      status: "duplicate",
    });

    const third = await startTestGateway({ stateDir, fake });
    await third.close();
    expect(third.chat.sent).toEqual([]);
    expect(fake.requests).toHaveLength(2);
  });

  it("a reply that reached the transcript before a crash is delivered without calling the model again", async () => {
    const first = await startTestGateway({ stateDir, fake });
    fake.enqueue({ hang: "before-headers" });
    const running = await first.chat.inject({ text: "what is 6x7?" });
    await fake.waitForRequest(1);
    await first.close();
    await done(running);
    // As if the previous run wrote the answer, then died before sending it.
    const journal = await readFile(join(stateDir, "journal", "inbound.jsonl"), "utf8");
    const jid = journal
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l) as { op: string; jid?: string })
      .find((r) => r.op === "accept")!.jid!;
    const entry = JSON.parse(await readFile(join(stateDir, "sessions", "sessions.json"), "utf8")).main as {
      sessionId: string;
    };
    await appendTranscript(
      join(stateDir, "sessions", `${entry.sessionId}.jsonl`),
      [
        {
          type: "message",
          id: newEntryId(),
          ts: new Date().toISOString(),
          message: { role: "assistant", content: "42" },
          meta: { journalId: jid, final: true },
        },
      ],
      { header: makeHeader(entry.sessionId, "main", new Date()) },
    );

    const second = await startTestGateway({ stateDir, fake });
    await second.chat.waitForSent(1);
    await second.close();
    expect(second.chat.textsTo("c-alice")).toEqual(["42"]);
    expect(fake.requests).toHaveLength(1);
    expect((await second.transcript()).map((m) => m.message.content)).toEqual(["what is 6x7?", "42"]);
  });

  it("a reply the chat app did not take is kept and delivered after the next start, without a new model call", async () => {
    const first = await startTestGateway({ stateDir, fake });
    first.chat.failSends = "chat service unreachable";
    const outcome = await done(await first.chat.inject({ text: "remember the milk" }));
    // The turn ended with a reply; the send failed and waits to be tried again (the record stays open).
    expect(outcome.stopReason).toBe("end");
    await expect
      .poll(() =>
        first.logs.some(
          (l) =>
            l.message === "send failed; trying again until it goes through" &&
            String(l.fields?.error).includes("chat service unreachable"),
        ),
      )
      .toBe(true);
    expect(first.gateway.journal.openCount()).toBe(1);
    await first.close();

    const second = await startTestGateway({ stateDir, fake });
    await second.chat.waitForSent(1);
    await second.close();
    expect(second.chat.textsTo("c-alice")).toEqual(["echo: remember the milk"]);
    expect(fake.requests).toHaveLength(1);
    expect((await second.transcript()).map((m) => m.message.content)).toEqual([
      "remember the milk",
      "echo: remember the milk",
    ]);
  });

  it("a one-shot in-process run (clawdis agent) leaves open messages to the next real gateway", async () => {
    const first = await startTestGateway({ stateDir, fake });
    fake.enqueue({ hang: "before-headers" });
    const running = await first.chat.inject({ text: "for the gateway" });
    await fake.waitForRequest(1);
    await first.close();
    await done(running);

    const oneShot = await startTestGateway({ stateDir, fake, oneShot: true });
    await oneShot.close();
    expect(oneShot.chat.sent).toEqual([]);
    expect(fake.requests).toHaveLength(1);

    const gateway = await startTestGateway({ stateDir, fake });
    await gateway.chat.waitForSent(1);
    await gateway.close();
    expect(gateway.chat.textsTo("c-alice")).toEqual(["echo: for the gateway"]);
  });
});
