import { mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { JournalMessageV2 } from "../src/sessions/journal-record.js";
import { type FakeOpenAI, startFakeOpenAI } from "./fakes/openai-server.js";
import { done, startTestGateway } from "./helpers/gateway-harness.js";

async function acceptRecords(stateDir: string): Promise<{ jid: string; msg: JournalMessageV2 }[]> {
  const journal = await readFile(join(stateDir, "journal", "inbound.jsonl"), "utf8");
  return journal
    .trim()
    .split("\n")
    .map((l) => JSON.parse(l) as { op: string; jid: string; msg: JournalMessageV2 })
    .filter((r) => r.op === "accept");
}

describe("gateway: internal input (a reminder, a job's result) answered in the session's chat", () => {
  let stateDir: string;
  let fake: FakeOpenAI;
  beforeEach(async () => {
    stateDir = await mkdtemp(join(tmpdir(), "clawdis-internal-"));
    fake = await startFakeOpenAI();
  });
  afterEach(async () => {
    await fake.close();
    await rm(stateDir, { recursive: true, force: true });
  });

  it("is answered once in the chat the session was last used from, labelled by its kind, its authority journaled", async () => {
    const gw = await startTestGateway({ stateDir, fake });
    await done(await gw.chat.inject({ text: "hello" }));
    await gw.idle();
    const result = await gw.gateway.submitInternal({
      sessionKey: "main",
      kind: "reminder",
      text: "water the plants",
      authority: "owner",
    });
    const outcome = await done(result);
    expect(outcome.stopReason).toBe("end");
    await gw.chat.waitForSent(2);
    await gw.close();
    expect(gw.chat.textsTo("c-alice")).toEqual(["echo: hello", "echo: [reminder] water the plants"]);
    const internal = (await acceptRecords(stateDir)).filter((r) => r.msg.internal !== undefined);
    expect(internal).toHaveLength(1);
    expect(internal[0]?.msg).toMatchObject({
      authority: "owner",
      internal: { kind: "reminder" },
      chatId: "c-alice",
      local: false,
    });
    expect(gw.gateway.journal.openCount()).toBe(0);
  });

  it("accepted before a stop, it is answered once after the next start", async () => {
    const first = await startTestGateway({ stateDir, fake });
    await done(await first.chat.inject({ text: "hello" }));
    await first.idle();
    fake.enqueue({ hang: "before-headers" });
    const running = await first.gateway.submitInternal({
      sessionKey: "main",
      kind: "job-result",
      text: "backup finished",
      authority: "automated",
    });
    await fake.waitForRequest(2);
    await first.close();
    expect((await done(running)).stopReason).toBe("aborted");

    const second = await startTestGateway({ stateDir, fake });
    await expect
      .poll(() => second.chat.textsTo("c-alice"), { timeout: 10_000 })
      .toContain("echo: [job-result] backup finished");
    await second.close();
    expect(second.chat.textsTo("c-alice")).toEqual(["echo: [job-result] backup finished"]);
    const internal = (await acceptRecords(stateDir)).filter((r) => r.msg.internal !== undefined);
    expect(internal.map((r) => r.msg.authority)).toEqual(["automated"]);

    const third = await startTestGateway({ stateDir, fake });
    await third.close();
    expect(third.chat.sent).toEqual([]);
    expect(fake.requests).toHaveLength(3);
  });

  it("is refused clearly for a session never used from a chat and given no route", async () => {
    const gw = await startTestGateway({ stateDir, fake });
    await expect(
      gw.gateway.submitInternal({
        sessionKey: "hook:nowhere",
        kind: "reminder",
        text: "x",
        authority: "owner",
      }),
    ).rejects.toThrow(/no chat to reply to/);
    expect(gw.gateway.journal.openCount()).toBe(0);
    await gw.close();
    expect(fake.requests).toHaveLength(0);
  });

  it("goes to the route given, even for a session never used from a chat", async () => {
    const gw = await startTestGateway({ stateDir, fake });
    const result = await gw.gateway.submitInternal({
      sessionKey: "hook:ci",
      kind: "subagent-notice",
      text: "done",
      authority: "automated",
      route: { channel: gw.chat.plugin.id, chatId: "c-bob", chatType: "direct" },
    });
    await done(result);
    await gw.chat.waitForSent(1);
    await gw.close();
    expect(gw.chat.textsTo("c-bob")).toEqual(["echo: [subagent-notice] done"]);
  });
});
