import { cpSync, readFileSync } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { blockUntil, type OffThreadHttp, offThreadHttp } from "../../../test/fakes/off-thread-http.js";
import { ManualClock } from "../../core/clock.js";
import { createMemoryLogger } from "../../core/logger.js";
import { confirmingFetch } from "../../plugin-api/confirming-fetch.js";
import type { Transport } from "../../plugin-api/types.js";
import { Journal } from "../../sessions/journal.js";
import { Outbox } from "../outbox.js";
import { SendThread } from "./send-thread.js";

/**
 * The outbox, a transport that sends through `confirmingFetch`, and the send thread (compiled: `npm test` builds
 * first): a kill -9 right after the chat app took a reply, while the main thread has not read its answer, finds
 * the reply recorded.
 */
describe("Outbox with the send thread", () => {
  let dir: string;
  let journal: Journal;
  let thread: SendThread;
  let http: OffThreadHttp;
  const { logger } = createMemoryLogger();
  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), "clawdis-outbox-thread-"));
    journal = new Journal({ dir: join(dir, "journal"), logger });
    await journal.openJournal();
    thread = new SendThread({ confirmationsPath: journal.confirmationsPath, logger });
    expect(await thread.ready).toBe(true);
    http = await offThreadHttp();
  });
  afterEach(async () => {
    await thread.close();
    await http.close();
    await journal.close();
    await rm(dir, { recursive: true, force: true });
  });

  /**
   * A transport whose every request is `path` on the off-thread server. Its n-th send waits for `allow(n)` (none
   * when `gated` is false); `started(n)` resolves once that request is made.
   */
  function transport(path: string, maxTextLength: number, gated = true) {
    const deferred = () => {
      const list: { promise: Promise<void>; resolve: () => void }[] = [];
      return (n: number) => {
        while (list.length <= n) {
          let resolve!: () => void;
          const promise = new Promise<void>((r) => {
            resolve = r;
          });
          list.push({ promise, resolve });
        }
        return list[n]!;
      };
    };
    const start = deferred();
    const gate = deferred();
    let made = 0;
    const up: Transport = {
      capabilities: { maxTextLength },
      authorize: () => ({ allowed: true }),
      send: async (message, signal, confirmed) => {
        const n = made++;
        if (gated) await gate(n).promise;
        const fetch = confirmingFetch(confirmed ?? (() => {}), { takenStatus: 200 });
        const answer = fetch(`${http.url}${path}`, { method: "POST", body: message.text, signal });
        start(n).resolve();
        const body = (await (await answer).json()) as { ok: boolean };
        if (!body.ok) throw Object.assign(new Error("refused"), { permanent: true });
        return {};
      },
    };
    return { up, allow: (n: number) => gate(n).resolve(), started: (n: number) => start(n).promise };
  }

  const outboxFor = (up: Transport) =>
    new Outbox({
      transport: () => up,
      journal,
      clock: new ManualClock(),
      logger,
      warnAfterMs: 1000,
      sendThread: () => thread,
    });

  const accept = (id: string) =>
    journal.accept(
      {
        channel: "t",
        chatId: "c",
        chatType: "direct",
        senderId: "s",
        messageId: id,
        text: "x",
        receivedAt: 1,
      },
      1,
    );

  it("the records of each part are on disk before the main thread reads the chat app's answer", async () => {
    const [jid, also] = [await accept("m1"), await accept("m2")];
    const { up, allow, started } = transport("/taken", 10);
    const outbox = outboxFor(up);
    const main = () => readFileSync(journal.filePath, "utf8");
    const copies: string[][] = [];
    const handed = outbox.enqueue({
      channel: "t",
      chatId: "c",
      text: "aaaa bbbb cccc",
      kind: "reply",
      jid,
      alsoEnd: [also],
    });
    for (const [part, expected] of [
      [0, `"op":"delivered","jid":"${jid}"`],
      [1, `"op":"end","jid":"${also}"`],
    ] as const) {
      allow(part);
      await started(part);
      // No turn of the main thread's event loop from here: its own record cannot be written meanwhile.
      blockUntil(
        () => readFileSync(journal.confirmationsPath, "utf8").includes(expected),
        `the send thread's record of part ${part}`,
      );
      expect(main()).not.toContain(expected);
      // What a kill -9 now leaves on disk, opened by the next start.
      const crash = join(dir, `crash-${part}`);
      cpSync(join(dir, "journal"), crash, { recursive: true });
      const next = new Journal({ dir: crash, logger });
      copies.push((await next.openJournal()).flatMap((r) => [r.jid, ...r.delivered.map(String)]));
      await next.close();
    }
    expect(await handed).toBe("sent");
    expect(copies).toEqual([[jid, "0", also], []]);
    // The main thread wrote its own records too.
    expect(main()).toContain(`"op":"end","jid":"${jid}"`);
    expect(journal.get(jid)).toBeUndefined();
  });

  it("an answer that refuses the part writes nothing there, and the part is given up on the main thread", async () => {
    const jid = await accept("m1");
    const { up } = transport("/refused", 100, false);
    const outbox = outboxFor(up);
    expect(await outbox.enqueue({ channel: "t", chatId: "c", text: "hello", kind: "reply", jid })).toBe(
      "failed",
    );
    expect(readFileSync(journal.confirmationsPath, "utf8")).toBe("");
    expect(await http.requests()).toBe(1);
  });
});
