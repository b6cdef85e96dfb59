import { mkdir, open, readFile, rm, rmdir, stat } from "node:fs/promises";
import { afterEach, describe, expect, it } from "vitest";
import type { ToolDefinition } from "../src/plugin-api/types.js";
import { makeHeader, readTranscriptForResume } from "../src/sessions/transcript.js";
import { resumeBudgetBytes } from "../src/sessions/transcript-resume.js";
import type { MessageEntry } from "../src/sessions/types.js";
import { done, startTestGateway, type TestGateway } from "./helpers/gateway-harness.js";

/**
 * Warm sessions (docs/runtime.md, Memory): the transcript held open and the context tail held in memory between
 * turns, released on passivation; the workspace created once; the store update never holding the reply back; a
 * transcript of any size resumed within the model's window.
 */
describe("gateway: warm sessions", () => {
  let t: TestGateway;
  afterEach(async () => {
    await t?.close();
  });

  /** `bytesRead` of each turn's context read, in order (0: from the warm tail, the file not touched). */
  const contextReads = () =>
    t.logs.filter((l) => l.message === "context resumed").map((l) => l.fields?.bytesRead as number);

  it("turns append through one open transcript and resume from memory, equal to a read of the file", async () => {
    t = await startTestGateway();
    await done(await t.chat.inject({ text: "one" }));
    await t.idle();
    const warm = t.gateway.sessions.peek("main");
    const writer = warm?.transcript;
    expect(writer?.isClosed).toBe(false);
    for (const text of ["two", "three"]) {
      await done(await t.chat.inject({ text }));
      await t.idle();
    }
    expect(t.gateway.sessions.peek("main")?.transcript).toBe(writer);
    const reads = contextReads();
    expect(reads).toHaveLength(3);
    // The first two turns read the file (the second keeps the tail: a session used once holds none), then memory.
    expect(reads[0]).toBeGreaterThan(0);
    expect(reads[1]).toBeGreaterThan(0);
    expect(reads.slice(2)).toEqual([0]);
    // What the model was sent comes from memory, and is what a read of the file gives.
    const entry = await t.gateway.store.get("main");
    const read = await readTranscriptForResume(t.gateway.store.transcriptPath(entry!.sessionId), {
      maxBytes: resumeBudgetBytes(t.gateway.config.inbound.reply.agent.contextTokens),
    });
    expect(warm?.tail?.entries).toEqual(read.entries);
    expect(t.fake.requests.at(-1)!.body.messages.map((m) => m.content)).toEqual([
      expect.any(String),
      "one",
      "echo: one",
      "two",
      "echo: two",
      "three",
    ]);
  });

  it("passivation closes the transcript and drops the tail; the next message opens and reads it again", async () => {
    t = await startTestGateway({ config: { inbound: { reply: { session: { passivateAfterMinutes: 1 } } } } });
    await done(await t.chat.inject({ text: "remember kiwi" }));
    await t.idle();
    const writer = t.gateway.sessions.peek("main")?.transcript;
    expect(t.gateway.sessions.held().openTranscripts).toBe(1);
    t.clock.advance(60_000);
    await t.gateway.sessions.settled();
    t.clock.advance(5_000);
    await t.gateway.sessions.settled();
    expect(t.gateway.sessions.peek("main")).toBeUndefined();
    expect(writer?.isClosed).toBe(true);
    expect(t.gateway.sessions.held()).toEqual({ openTranscripts: 0, tailBytes: 0 });

    await done(await t.chat.inject({ text: "which fruit?" }));
    await t.idle();
    const again = t.gateway.sessions.peek("main")?.transcript;
    expect(again).toBeDefined();
    expect(again).not.toBe(writer);
    expect(contextReads().at(-1)).toBeGreaterThan(0);
    expect(t.fake.requests.at(-1)!.body.messages.map((m) => m.content)).toContain("remember kiwi");
  });

  it("the workspace is made (0700) by a turn's first tool call when missing, never by turns without tools", async () => {
    const seen: { exists: boolean; mode: number }[] = [];
    const probe: ToolDefinition = {
      name: "probe",
      description: "says whether the working directory is there",
      parameters: { type: "object", properties: {} },
      execute: async (_args, context) => {
        const info = await stat(context.cwd).catch(() => undefined);
        seen.push({ exists: info !== undefined, mode: (info?.mode ?? 0) & 0o777 });
        return { ok: true, output: "ok" };
      },
    };
    t = await startTestGateway({ tools: [probe] });
    const workspace = t.gateway.options.workspaceDir;
    const missing = () => expect(stat(workspace)).rejects.toMatchObject({ code: "ENOENT" });
    const probeTurn = async () => {
      t.fake.enqueue({ toolCalls: [{ name: "probe", arguments: {} }] }, { text: "done" });
      expect((await done(await t.chat.inject({ text: "use the probe" }))).stopReason).toBe("end");
    };
    await done(await t.chat.inject({ text: "a turn without tools" }));
    await missing();
    await probeTurn();
    await rm(workspace, { recursive: true });
    await done(await t.chat.inject({ text: "another turn without tools" }));
    await missing();
    await probeTurn();
    expect(seen).toEqual([
      { exists: true, mode: 0o700 },
      { exists: true, mode: 0o700 },
    ]);
  });

  it("the reply and the turn's end do not wait for the store update (its lock held elsewhere)", async () => {
    t = await startTestGateway();
    await done(await t.chat.inject({ text: "first" }));
    await t.idle();
    const before = (await t.gateway.store.get("main"))!.lastInteractionAt;
    // Another process holds the store's lock: the update after the next turn waits for it.
    const lockDir = `${t.gateway.store.path}.lock`;
    await mkdir(lockDir);
    const ends: string[] = [];
    const off = t.gateway.onEvent((event) => {
      if (event.type === "turn-end") ends.push(event.stopReason);
    });
    t.clock.advance(1000);
    const outcome = await done(await t.chat.inject({ text: "second" }));
    off();
    expect(outcome.payloads.at(-1)?.text).toBe("echo: second");
    expect(t.chat.textsTo("c-alice")).toContain("echo: second");
    expect(ends).toEqual(["end"]);
    expect((await t.gateway.store.get("main"))!.lastInteractionAt).toBe(before);
    // /status waits for that update (at most 1 s): what it shows includes the turn that just ended.
    let statusAt: number | undefined;
    const status = done(await t.chat.inject({ text: "/status" })).then(async (o) => {
      statusAt = (await t.gateway.store.get("main"))!.lastInteractionAt;
      return o;
    });
    await new Promise((resolve) => setImmediate(resolve));
    expect(statusAt).toBeUndefined();
    await rmdir(lockDir);
    expect((await status).stopReason).toBe("command");
    expect(statusAt).toBeGreaterThan(before!);
    await t.idle();
    expect((await t.gateway.store.get("main"))!.lastInteractionAt).toBeGreaterThan(before!);
  });

  it("the session's next message does not wait for that update either, and decides on it", async () => {
    t = await startTestGateway({ config: { inbound: { reply: { session: { idleMinutes: 1 } } } } });
    await done(await t.chat.inject({ text: "first" }));
    await t.idle();
    const first = (await t.gateway.store.get("main"))!;
    const lockDir = `${t.gateway.store.path}.lock`;
    await mkdir(lockDir);
    // 59.99 s later: the session goes on, and this turn is the last exchange, its update held by the lock.
    t.clock.advance(59_990);
    await done(await t.chat.inject({ text: "second" }));
    // 15 ms later (the clock stands still from here): the file says more than 60 s since the last exchange, the
    // turn that just ended says 15 ms. The third message is answered while the lock is still held, in the same
    // session; a turn that waited for the update's write would never end here.
    t.clock.advance(15);
    const third = await done(await t.chat.inject({ text: "third" }));
    expect(third.payloads.at(-1)?.text).toBe("echo: third");
    const texts = t.chat.textsTo("c-alice");
    expect(texts.at(-1)).toBe("echo: third");
    expect(texts.some((text) => text.includes("A new session began"))).toBe(false);
    // Both turns' updates still wait to share a write: the third turn did not set it off.
    expect(t.gateway.store.waitingUpdates).toBe(2);
    expect((await t.gateway.store.get("main"))!.lastInteractionAt).toBe(first.lastInteractionAt);
    await rmdir(lockDir);
    await t.idle();
    const after = (await t.gateway.store.get("main"))!;
    expect(after.sessionId).toBe(first.sessionId);
    expect(after.lastInteractionAt).toBeGreaterThan(first.lastInteractionAt!);
  });

  it("GET /api/sessions right after a reply lists the turn that ended (it waits for that store update)", async () => {
    t = await startTestGateway({ listen: true });
    await done(await t.chat.inject({ text: "first" }));
    await t.idle();
    const before = (await t.gateway.store.get("main"))!.lastInteractionAt;
    const lockDir = `${t.gateway.store.path}.lock`;
    await mkdir(lockDir);
    t.clock.advance(1000);
    await done(await t.chat.inject({ text: "second" }));
    const address = t.gateway.listeningAddress()!;
    let listed: { key: string; lastInteractionAt?: number }[] | undefined;
    const reading = fetch(`http://${address.host}:${address.port}/api/sessions`, {
      headers: { authorization: "Bearer test-token-0123456789" },
    })
      .then((res) => res.json() as Promise<{ sessions: { key: string; lastInteractionAt?: number }[] }>)
      .then((body) => {
        listed = body.sessions;
      });
    // The request sets the waiting update's write off (no update waits any more) and is held while that write
    // waits for the lock; it is answered with the update once it is written.
    expect(t.gateway.store.waitingUpdates, "the second turn's update waits to share a write").toBe(1);
    await expect
      .poll(() => t.gateway.store.waitingUpdates, {
        message: "GET /api/sessions sets the waiting update's write off",
        timeout: 5000,
      })
      .toBe(0);
    expect(listed).toBeUndefined();
    await rmdir(lockDir);
    await reading;
    expect(listed?.find((s) => s.key === "main")?.lastInteractionAt).toBeGreaterThan(before!);
  });

  it("a stop waits for the store update of the last turn (nothing writes to the store once stopped)", async () => {
    t = await startTestGateway();
    await done(await t.chat.inject({ text: "first" }));
    await t.idle();
    const before = (await t.gateway.store.get("main"))!.lastInteractionAt;
    const lockDir = `${t.gateway.store.path}.lock`;
    await mkdir(lockDir);
    t.clock.advance(1000);
    await done(await t.chat.inject({ text: "second" }));
    // The turn is over; its store update waits to share a write (write-behind), then for the lock.
    let stopped = false;
    const stopping = t.gateway.stop().then(() => {
      stopped = true;
    });
    for (let i = 0; i < 20; i++) await new Promise((resolve) => setImmediate(resolve));
    expect(stopped).toBe(false);
    await rmdir(lockDir);
    await stopping;
    const onDisk = JSON.parse(await readFile(t.gateway.store.path, "utf8")) as Record<
      string,
      { lastInteractionAt?: number }
    >;
    expect(onDisk.main?.lastInteractionAt).toBeGreaterThan(before!);
  });

  it("a 1 GB transcript without a compaction entry resumes within the model's window, from memory next time", async () => {
    t = await startTestGateway({ config: { inbound: { reply: { agent: { contextTokens: 16_000 } } } } });
    await done(await t.chat.inject({ text: "start" }));
    await t.idle();
    const entry = (await t.gateway.store.get("main"))!;
    const path = t.gateway.store.transcriptPath(entry.sessionId);
    // Sparse: the header, a gigabyte that was never written, then the newest exchange.
    const handle = await open(path, "w");
    const newest: MessageEntry[] = [
      {
        type: "message",
        id: "u1",
        ts: new Date(0).toISOString(),
        message: { role: "user", content: "the plan?" },
      },
      {
        type: "message",
        id: "a1",
        ts: new Date(0).toISOString(),
        message: { role: "assistant", content: "the plan holds" },
      },
    ];
    await handle.write(`${JSON.stringify(makeHeader(entry.sessionId, "main", new Date(0)))}\n`);
    await handle.truncate(1024 ** 3);
    await handle.write(`\n${newest.map((e) => `${JSON.stringify(e)}\n`).join("")}`, 1024 ** 3);
    await handle.close();

    const outcome = await done(await t.chat.inject({ text: "and now?" }));
    expect(outcome.stopReason).toBe("end");
    const sent = t.fake.requests.at(-1)!.body.messages.map((m) => m.content);
    expect(sent.slice(1)).toEqual(["the plan?", "the plan holds", "and now?"]);
    expect(JSON.stringify(t.fake.requests.at(-1)!.body).length).toBeLessThan(resumeBudgetBytes(16_000));
    expect(contextReads().at(-1)).toBeLessThan(2 * resumeBudgetBytes(16_000));
    expect(t.logs.some((l) => l.message.startsWith("transcript is longer than the model's window"))).toBe(
      true,
    );
    await t.idle();
    await done(await t.chat.inject({ text: "again" }));
    expect(contextReads().at(-1)).toBe(0);
  });
});
