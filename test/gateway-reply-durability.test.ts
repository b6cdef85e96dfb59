import { readFileSync, readlinkSync } from "node:fs";
import { type FileHandle, mkdtemp, open, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { InboundMessage } from "../src/plugin-api/types.js";
import { MAX_RECORD_BYTES } from "../src/sessions/journal.js";
import { type FakeOpenAI, startFakeOpenAI } from "./fakes/openai-server.js";
import { done, startTestGateway, type TestGateway } from "./helpers/gateway-harness.js";
import { beforeJournalDatasync } from "./helpers/journal-datasync.js";

interface Line {
  op: string;
  id?: string;
  upTo?: string;
  jid?: string;
  entries?: { id: string; message?: { role: string; content: string } }[];
}

function journalLines(stateDir: string): Line[] {
  return readFileSync(join(stateDir, "journal", "inbound.jsonl"), "utf8")
    .trim()
    .split("\n")
    .map((l) => JSON.parse(l) as Line);
}

/**
 * A reply is on disk before it is sent (docs/runtime.md, "A turn", step 5): in a session synced within the last
 * second (by the gateway's clock, which these tests move by hand) through a journal `reply` record that shares the
 * group commit with other turns' records, the transcript synced behind; otherwise by an fsync of the transcript. A
 * start puts back what a power cut took from a transcript. The fsyncs are the kernel's; these tests hold the
 * journal's own datasync (found by its path in /proc/self/fd) while its newest line is of a given kind.
 */
describe("gateway: a reply is durable in the journal before it is sent", () => {
  let t: TestGateway | undefined;
  let restore: (() => void) | undefined;
  afterEach(async () => {
    restore?.();
    restore = undefined;
    await t?.close();
    t = undefined;
  });

  /** Holds the journal's datasync while its last line is an `op` record, until `release()`; `entered` resolves then. */
  async function holdJournalSyncOf(journalPath: string, op: string) {
    let release: () => void = () => {};
    const held = new Promise<void>((resolve) => {
      release = resolve;
    });
    let entered: () => void = () => {};
    const enteredP = new Promise<void>((resolve) => {
      entered = resolve;
    });
    const unhook = await beforeJournalDatasync(journalPath, async () => {
      const last = readFileSync(journalPath, "utf8").trim().split("\n").at(-1) ?? "{}";
      if ((JSON.parse(last) as Line).op !== op) return;
      entered();
      await held;
    });
    restore = () => {
      release();
      unhook();
    };
    return { entered: enteredP, release: () => release() };
  }

  it("in a hot session the reply waits for its journal record's fsync; the transcript holds it already", async () => {
    t = await startTestGateway();
    await done(await t.chat.inject({ text: "first" }));
    const sync = await holdJournalSyncOf(t.gateway.journal.filePath, "reply");
    const outcome = done(await t.chat.inject({ text: "hello" }));
    await sync.entered;
    for (let i = 0; i < 50; i++) await new Promise((resolve) => setImmediate(resolve));
    expect(t.chat.textsTo("c-alice")).toEqual(["echo: first"]);
    const reply = journalLines(t.stateDir).find((l) => l.op === "reply");
    // The person's message and the answer, as the transcript holds them.
    expect(reply?.entries?.map((e) => [e.message?.role, e.message?.content])).toEqual([
      ["user", "hello"],
      ["assistant", "echo: hello"],
    ]);
    expect((await t.transcript()).map((m) => m.message.content)).toEqual([
      "first",
      "echo: first",
      "hello",
      "echo: hello",
    ]);
    sync.release();
    expect((await outcome).payloads.map((p) => p.text)).toEqual(["echo: hello"]);
    expect(t.chat.textsTo("c-alice")).toEqual(["echo: first", "echo: hello"]);
  });

  it("a reply too large for one journal record is fsync'd with its transcript before it is sent", async () => {
    t = await startTestGateway({
      chat: (chat) => {
        chat.maxTextLength = 10_000_000;
      },
    });
    await done(await t.chat.inject({ text: "first" }));
    const transcriptPath = t.gateway.store.transcriptPath((await t.gateway.store.get("main"))!.sessionId);
    // Every FileHandle.sync of the transcript (how a reply's fallback syncs it), with how many sends came before.
    const probe = await open(transcriptPath, "r");
    const proto = Object.getPrototypeOf(probe) as FileHandle;
    await probe.close();
    const original = proto.sync;
    const syncs: number[] = [];
    const chat = t.chat;
    proto.sync = async function (this: FileHandle) {
      if (readlinkSync(`/proc/self/fd/${this.fd}`) === transcriptPath) syncs.push(chat.sent.length);
      return original.call(this);
    };
    restore = () => {
      proto.sync = original;
    };
    const big = "x".repeat(MAX_RECORD_BYTES);
    t.fake.enqueue({ text: big });
    const outcome = await done(await t.chat.inject({ text: "a long one" }));
    expect(outcome.payloads.map((p) => p.text.length)).toEqual([big.length]);
    expect(journalLines(t.stateDir).filter((l) => l.op === "reply")).toEqual([]);
    expect(syncs[0]).toBe(1);
  });

  it("a session not synced within the last second pays its own fsync: no journal record", async () => {
    t = await startTestGateway();
    await done(await t.chat.inject({ text: "one" }));
    expect(journalLines(t.stateDir).filter((l) => l.op === "reply")).toEqual([]);
    t.clock.advance(1000);
    await done(await t.chat.inject({ text: "two" }));
    expect(journalLines(t.stateDir).filter((l) => l.op === "reply")).toEqual([]);
    t.clock.advance(999);
    await done(await t.chat.inject({ text: "three" }));
    const replies = journalLines(t.stateDir).filter((l) => l.op === "reply");
    expect(replies.map((r) => r.entries?.map((e) => e.message?.content))).toEqual([["three", "echo: three"]]);
    expect(t.gateway.transcriptSync.pendingCount()).toBe(1);
  });

  it("a reply to the local API in a hot session ends its record in the same journal record", async () => {
    t = await startTestGateway();
    const local = (n: number): InboundMessage => ({
      channel: "api",
      chatId: "api:1",
      chatType: "direct",
      senderId: "local",
      messageId: `local-${n}`,
      text: `hi ${n}`,
      receivedAt: Date.now(),
    });
    await done(await t.gateway.receive(local(1), { local: true }));
    const outcome = await done(await t.gateway.receive(local(2), { local: true }));
    expect(outcome.payloads.map((p) => p.text)).toEqual(["echo: hi 2"]);
    // Ended as soon as the answer is given, with no `end` of its own.
    expect(t.gateway.journal.openCount()).toBe(0);
    const lines = journalLines(t.stateDir);
    const second = lines.filter((l) => l.op === "accept")[1]!.jid;
    expect(lines.filter((l) => l.op === "reply").map((l) => (l as { ends?: unknown }).ends)).toEqual([
      [{ jid: second }],
    ]);
    expect(lines.filter((l) => l.op === "end" && l.jid === second)).toEqual([]);
    expect(lines.filter((l) => l.op === "end")).toHaveLength(1);
  });

  it("the transcripts behind journal replies are synced behind, and the pass marks the replies it covers", async () => {
    t = await startTestGateway();
    await done(await t.chat.inject({ text: "one" }));
    expect(t.gateway.transcriptSync.pendingCount()).toBe(0);
    await done(await t.chat.inject({ text: "two" }));
    expect(t.gateway.transcriptSync.pendingCount()).toBe(1);
    await t.gateway.transcriptSync.pass();
    expect(t.gateway.transcriptSync.pendingCount()).toBe(0);
    const lines = journalLines(t.stateDir);
    const reply = lines.find((l) => l.op === "reply")!;
    expect(lines.filter((l) => l.op === "synced").map((l) => l.upTo)).toEqual([reply.id]);
  });
});

describe("gateway: a start puts back what a power cut took from a transcript", () => {
  let stateDir: string;
  let fake: FakeOpenAI;
  beforeEach(async () => {
    stateDir = await mkdtemp(join(tmpdir(), "clawdis-powercut-"));
    fake = await startFakeOpenAI();
  });
  afterEach(async () => {
    await fake.close();
    await rm(stateDir, { recursive: true, force: true });
  });

  /**
   * The state a power cut may leave after an answered message: the journal on disk up to its `end` (fsync'd) but
   * not the `synced` mark after it, and the transcript without the lines written since its last fsync.
   */
  async function cutPower(keepTranscriptLines: number): Promise<void> {
    const journalPath = join(stateDir, "journal", "inbound.jsonl");
    const kept = journalLines(stateDir).filter((l) => l.op !== "synced");
    await writeFile(journalPath, `${kept.map((l) => JSON.stringify(l)).join("\n")}\n`);
    const entry = JSON.parse(await readFile(join(stateDir, "sessions", "sessions.json"), "utf8")).main as {
      sessionId: string;
    };
    const transcriptPath = join(stateDir, "sessions", `${entry.sessionId}.jsonl`);
    const lines = (await readFile(transcriptPath, "utf8")).split("\n").slice(0, keepTranscriptLines);
    await writeFile(transcriptPath, lines.map((l) => `${l}\n`).join(""));
  }

  it("the exchange is written back from the journal: no model call, nothing sent again, a warning", async () => {
    const first = await startTestGateway({ stateDir, fake });
    // The first reply is fsync'd with its transcript; the second, in a hot session, is held by the journal.
    await done(await first.chat.inject({ text: "hello" }));
    await done(await first.chat.inject({ text: "what is 6x7?" }));
    await first.close();
    // The header and the first exchange survived.
    await cutPower(3);

    const second = await startTestGateway({ stateDir, fake });
    expect((await second.transcript()).map((m) => [m.message.role, m.message.content])).toEqual([
      ["user", "hello"],
      ["assistant", "echo: hello"],
      ["user", "what is 6x7?"],
      ["assistant", "echo: what is 6x7?"],
    ]);
    expect(second.logs.some((l) => l.message.includes("written again from the journal"))).toBe(true);
    await done(await second.chat.inject({ text: "and 7x8?", messageId: "second-1" }));
    await second.close();
    expect(second.chat.textsTo("c-alice")).toEqual(["echo: and 7x8?"]);
    expect(fake.requests).toHaveLength(3);
    // The next turn's model saw the exchange that was put back.
    const history = fake.requests[2]!.body.messages.map((m) => m.content);
    expect(history).toContain("echo: what is 6x7?");
    const again = (await second.transcript()).map((m) => m.message.content);
    expect(again.filter((c) => c === "what is 6x7?")).toHaveLength(1);
  });

  it("after a crash that left the lines in place, nothing is written twice", async () => {
    const first = await startTestGateway({ stateDir, fake });
    await done(await first.chat.inject({ text: "hello" }));
    await done(await first.chat.inject({ text: "still here?" }));
    await first.close();
    await cutPower(5);

    const second = await startTestGateway({ stateDir, fake });
    expect((await second.transcript()).map((m) => m.message.content)).toEqual([
      "hello",
      "echo: hello",
      "still here?",
      "echo: still here?",
    ]);
    expect(second.logs.some((l) => l.message.includes("written again from the journal"))).toBe(false);
    await second.close();
    expect(fake.requests).toHaveLength(2);
  });
});
