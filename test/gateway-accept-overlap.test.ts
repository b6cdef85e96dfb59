import { afterEach, describe, expect, it } from "vitest";
import { done, startTestGateway, type TestGateway } from "./helpers/gateway-harness.js";
import { beforeJournalDatasync } from "./helpers/journal-datasync.js";

/**
 * Journal before acknowledgement, with the fsync off the model's path (docs/runtime.md, step 1 of a turn): a
 * message's record is written, its turn begins and the model request goes out while the record's fsync runs;
 * the transport hears "received", and the person sees anything, only once the record is on disk. The fsync is
 * the kernel's; these tests hold or fail the journal's own (found by its path in /proc/self/fd), nothing else.
 */
describe("gateway: the journal's fsync overlaps the model request", () => {
  let t: TestGateway | undefined;
  let restore: (() => void) | undefined;
  afterEach(async () => {
    restore?.();
    restore = undefined;
    await t?.close();
    t = undefined;
  });

  /** Makes the datasyncs of the journal's file wait while `hold()` holds them, or fail once (`failNext`) with EIO. */
  async function interceptJournalSync(journalPath: string) {
    const state: { held?: Promise<void>; failNext?: boolean; failHeld?: boolean; syncs: number } = {
      syncs: 0,
    };
    let release: () => void = () => {};
    const hold = () => {
      state.held = new Promise((resolve) => {
        release = resolve;
      });
      return () => release();
    };
    const unhook = await beforeJournalDatasync(journalPath, async () => {
      state.syncs += 1;
      if (state.failNext) {
        state.failNext = false;
        throw Object.assign(new Error("EIO: i/o error, fdatasync"), { code: "EIO", errno: -5 });
      }
      if (state.held) await state.held;
      if (state.failHeld) {
        state.failHeld = false;
        throw Object.assign(new Error("EIO: i/o error, fdatasync"), { code: "EIO", errno: -5 });
      }
    });
    restore = () => {
      release();
      unhook();
    };
    return { state, hold };
  }

  it("the model is asked before the record is on disk; nothing reaches the person or the transport before", async () => {
    t = await startTestGateway();
    const { state: sync, hold } = await interceptJournalSync(t.gateway.journal.filePath);
    const release = hold();
    let received = false;
    const receiving = t.chat.inject({ text: "hello" }).then((result) => {
      received = true;
      return result;
    });
    // The request reaches the model while the fsync is held, and its answer comes back at once.
    const request = await t.fake.waitForRequest(1);
    expect(await request.closed).toBe("finished");
    const deltas: string[] = [];
    const off = t.gateway.onEvent((event) => {
      if (event.type === "delta") deltas.push(event.text);
    });
    for (let i = 0; i < 50; i++) await new Promise((resolve) => setImmediate(resolve));
    off();
    expect(deltas).toEqual([]);
    expect(received).toBe(false);
    expect(t.chat.sent).toEqual([]);
    release();
    const outcome = await done(await receiving);
    expect(outcome.payloads.map((p) => p.text)).toEqual(["echo: hello"]);
    expect(t.chat.textsTo("c-alice")).toEqual(["echo: hello"]);
    expect(sync.syncs).toBeGreaterThan(0);
  });

  it("a record whose fsync fails while the model thinks: its request is cancelled, the turn does not wait", async () => {
    t = await startTestGateway();
    const { state: sync, hold } = await interceptJournalSync(t.gateway.journal.filePath);
    const release = hold();
    sync.failHeld = true;
    t.fake.enqueue({ hang: "before-headers", text: "never used" });
    // Its caller is told at once (the rejection is awaited from the start, so it is never an unhandled one).
    const refused = expect(t.chat.inject({ text: "important", messageId: "m-2" })).rejects.toThrow(/EIO/);
    await t.fake.waitForRequest(1);
    release();
    // Without the cancel the turn would wait for a model that never answers (no watchdog moves on this clock).
    await t.fake.waitForAbort(1);
    await refused;
    await t.idle();
    expect(t.chat.sent).toEqual([]);
  });

  it("a record whose fsync fails: not taken, nothing reaches the person; the retry is answered once", async () => {
    t = await startTestGateway();
    const { state: sync } = await interceptJournalSync(t.gateway.journal.filePath);
    sync.failNext = true;
    await expect(t.chat.inject({ text: "important", messageId: "m-1" })).rejects.toThrow(/EIO/);
    await t.idle();
    expect(t.chat.sent).toEqual([]);
    expect(t.logs.some((l) => l.message.includes("was not taken"))).toBe(true);
    // The transport sends it again: it is taken this time (not a duplicate) and answered once.
    const outcome = await done(await t.chat.inject({ text: "important", messageId: "m-1" }));
    expect(outcome.payloads.map((p) => p.text)).toEqual(["echo: important"]);
    await t.idle();
    expect(t.chat.textsTo("c-alice")).toEqual(["echo: important"]);
    // The model saw the message once as a question; the first try is history marked unanswered.
    const last = t.fake.requests.at(-1)!.body.messages.filter((m) => m.role === "user");
    expect(last.at(-1)?.content).toBe("important");
    expect(last.filter((m) => m.content === "important")).toHaveLength(1);
  });
});
