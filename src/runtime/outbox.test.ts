import { readFileSync } from "node:fs";
import { mkdtemp, readdir, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { ManualClock } from "../core/clock.js";
import { createMemoryLogger } from "../core/logger.js";
import type { OutboundMessage, Transport } from "../plugin-api/types.js";
import { Journal } from "../sessions/journal.js";
import { Outbox, splitFor } from "./outbox.js";

function transport(sent: OutboundMessage[], extra: Partial<Transport> = {}): Transport {
  return {
    capabilities: { maxTextLength: 10 },
    authorize: () => ({ allowed: true }),
    send: async (m) => {
      sent.push(m);
      return {};
    },
    ...extra,
  };
}

describe("splitFor", () => {
  it("uses the transport's own split when it has one, else the fence-aware split at maxTextLength", () => {
    expect(splitFor(transport([]), "aaaa bbbb cccc")).toEqual(["aaaa bbbb", "cccc"]);
    expect(splitFor(transport([], { split: (t) => t.split(" ") }), "aaaa bbbb cccc")).toEqual([
      "aaaa",
      "bbbb",
      "cccc",
    ]);
    expect(splitFor(transport([], { split: () => [] }), "aaaa bbbb cccc")).toEqual(["aaaa bbbb", "cccc"]);
  });
});

describe("Outbox", () => {
  let dir: string;
  let journal: Journal;
  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), "clawdis-outbox-"));
    journal = new Journal({ dir, logger: createMemoryLogger().logger });
    await journal.openJournal();
  });
  afterEach(async () => {
    await journal.close();
    await rm(dir, { recursive: true, force: true });
  });

  const msg = (id: string) => ({
    channel: "t",
    chatId: "c",
    chatType: "direct" as const,
    senderId: "s",
    messageId: id,
    text: "x",
    receivedAt: 1,
  });

  /** Lets the sends and journal writes that a timer or a wake set off run (microtasks and one I/O turn). */
  const turn = () => new Promise((r) => setImmediate(r));

  it("holdUntil: no send starts before the hold settles; then every held part goes out in order, also after a rejected hold", async () => {
    for (const outcome of ["fulfilled", "rejected"] as const) {
      const events: string[] = [];
      const sent: OutboundMessage[] = [];
      const up = transport(sent, {
        send: async (m) => {
          events.push(`send ${m.text}`);
          sent.push(m);
          return {};
        },
      });
      const { logger } = createMemoryLogger();
      const outbox = new Outbox({
        transport: () => up,
        journal,
        clock: new ManualClock(),
        logger,
        warnAfterMs: 1000,
      });
      let settle!: () => void;
      const warm = new Promise<void>((resolve, reject) => {
        settle = () => (outcome === "fulfilled" ? resolve() : reject(new Error("no sdk")));
      });
      outbox.holdUntil(warm);
      void outbox.enqueue({ channel: "t", chatId: "c", text: "one", kind: "notice" });
      void outbox.enqueue({ channel: "t", chatId: "c", text: "two", kind: "notice" });
      // Without the hold both sends would have run in these turns (each is a microtask chain).
      await turn();
      await turn();
      events.push("warm");
      settle();
      await expect.poll(() => sent.length).toBe(2);
      expect(events).toEqual(["warm", "send one", "send two"]);
    }
  });

  it("tries a failed send again after the error's retryAfterMs (not before), and ends the record once it is through", async () => {
    const clock = new ManualClock();
    const sent: OutboundMessage[] = [];
    let failures = 1;
    const up = transport(sent, {
      send: async (m) => {
        if (failures-- > 0) throw Object.assign(new Error("429"), { retryAfterMs: 7000 });
        sent.push(m);
        return {};
      },
    });
    const { logger } = createMemoryLogger();
    const outbox = new Outbox({ transport: () => up, journal, clock, logger, warnAfterMs: 1000 });
    const jid = await journal.accept(msg("r1"), 1);
    expect(await outbox.enqueue({ channel: "t", chatId: "c", text: "hello", kind: "reply", jid })).toBe(
      "waiting",
    );
    clock.advance(6999);
    // A resumed send runs in microtasks after the timer: let it, then check nothing went out before 7 s.
    await turn();
    await turn();
    expect(sent).toEqual([]);
    clock.advance(1);
    await expect.poll(() => sent.length).toBe(1);
    await expect.poll(() => journal.openCount()).toBe(0);
  });

  it("never gives a reply up for failures that pass: 60 failed tries, then it is sent once, in order with the next", async () => {
    const clock = new ManualClock();
    const { logger, lines } = createMemoryLogger();
    const sent: OutboundMessage[] = [];
    let failures = 60;
    const flaky = transport(sent, {
      send: async (m) => {
        if (failures-- > 0) throw new Error("Telegram says 502: Bad Gateway");
        sent.push(m);
        return {};
      },
    });
    const outbox = new Outbox({ transport: () => flaky, journal, clock, logger, warnAfterMs: 1000 });
    const first = await journal.accept(msg("t1"), 1);
    const second = await journal.accept(msg("t2"), 1);
    const handed = outbox.enqueue({ channel: "t", chatId: "c", text: "first", kind: "reply", jid: first });
    void outbox.enqueue({ channel: "t", chatId: "c", text: "second", kind: "reply", jid: second });
    expect(await handed).toBe("waiting");
    for (let i = 0; i < 200 && sent.length === 0; i++) {
      clock.advance(30_000);
      await turn();
    }
    // The second follows once the first's record is ended (a journal write): no time needs to pass.
    await expect.poll(() => sent.length).toBe(2);
    expect(sent.map((m) => m.text)).toEqual(["first", "second"]);
    await expect.poll(() => journal.openCount()).toBe(0);
    expect(outbox.undeliverable()).toEqual([]);
    expect(lines.some((l) => l.level === "error")).toBe(false);
  });

  it("a send that goes through on a channel ends the backoff of its other lanes (not a rate limit's wait)", async () => {
    const clock = new ManualClock();
    const { logger } = createMemoryLogger();
    const sent: OutboundMessage[] = [];
    let outage = true;
    let limits = 1;
    const recovering = transport(sent, {
      send: async (m) => {
        if (m.chatId === "limited" && limits-- > 0)
          throw Object.assign(new Error("429"), { retryAfterMs: 9000 });
        if (outage) throw new Error("Telegram says 502: Bad Gateway");
        sent.push(m);
        return {};
      },
    });
    const outbox = new Outbox({ transport: () => recovering, journal, clock, logger, warnAfterMs: 1000 });
    expect(await outbox.enqueue({ channel: "t", chatId: "a", text: "to a", kind: "reply" })).toBe("waiting");
    expect(await outbox.enqueue({ channel: "t", chatId: "limited", text: "to l", kind: "reply" })).toBe(
      "waiting",
    );
    outage = false;
    // No time passes: b's send goes through, and a (backing off) follows at once; the rate-limited lane waits.
    expect(await outbox.enqueue({ channel: "t", chatId: "b", text: "to b", kind: "reply" })).toBe("sent");
    await expect.poll(() => sent.map((m) => m.chatId)).toEqual(["b", "a"]);
    await turn();
    expect(sent.map((m) => m.chatId)).toEqual(["b", "a"]);
    clock.advance(9000);
    await expect.poll(() => sent.map((m) => m.chatId)).toEqual(["b", "a", "limited"]);
  });

  it("a permanent refusal ends the reply failed-told, names the chat in the log and in undeliverable(); the lane goes on", async () => {
    const clock = new ManualClock();
    const { logger, lines } = createMemoryLogger();
    const sent: OutboundMessage[] = [];
    const refusing = transport(sent, {
      send: async (m) => {
        if (m.chatId === "gone")
          throw Object.assign(new Error("Telegram says 403: Forbidden: bot was blocked by the user"), {
            permanent: true,
          });
        sent.push(m);
        return {};
      },
    });
    const outbox = new Outbox({ transport: () => refusing, journal, clock, logger, warnAfterMs: 1000 });
    const jid = await journal.accept(msg("p1"), 1);
    const next = await journal.accept(msg("p2"), 1);
    expect(await outbox.enqueue({ channel: "t", chatId: "gone", text: "hello", kind: "reply", jid })).toBe(
      "failed",
    );
    expect(journal.get(jid)).toBeUndefined();
    expect(outbox.undeliverable()).toEqual([
      {
        channel: "t",
        chatId: "gone",
        kind: "reply",
        reason: "Telegram says 403: Forbidden: bot was blocked by the user",
        at: clock.now(),
      },
    ]);
    expect(
      lines.some(
        (l) =>
          l.level === "error" && l.message.includes("to t chat gone cannot be delivered (Telegram says 403"),
      ),
    ).toBe(true);
    expect(await outbox.enqueue({ channel: "t", chatId: "ok", text: "fine", kind: "reply", jid: next })).toBe(
      "sent",
    );
    expect(sent.map((m) => m.text)).toEqual(["fine"]);
  });

  it("a send that fails because the transport just went down parks: the same part is sent once on wake, never given up", async () => {
    const clock = new ManualClock();
    const { logger, lines } = createMemoryLogger();
    const sent: OutboundMessage[] = [];
    let up = true;
    let tries = 0;
    const dropping = transport(sent, {
      send: async (m) => {
        tries++;
        if (tries === 1) {
          up = false; // the socket dropped mid-send
          throw new Error("WhatsApp did not take the message (428: Connection Closed)");
        }
        sent.push(m);
        return {};
      },
    });
    const outbox = new Outbox({
      transport: () => (up ? dropping : undefined),
      journal,
      clock,
      logger,
      warnAfterMs: 1000,
    });
    const jid = await journal.accept(msg("d1"), 1);
    expect(await outbox.enqueue({ channel: "t", chatId: "c", text: "hello", kind: "reply", jid })).toBe(
      "waiting",
    );
    expect(journal.get(jid)).toBeDefined();
    expect(outbox.parked()).toMatchObject([{ channel: "t", count: 1 }]);
    up = true;
    // No time passes: a parked lane sends on wake, a backing-off one would wait for its timer.
    outbox.wake("t");
    await expect.poll(() => sent.length).toBe(1);
    await expect.poll(() => journal.openCount()).toBe(0);
    expect(sent.map((m) => m.text)).toEqual(["hello"]);
    expect(lines.some((l) => l.message.includes("send failed while the transport went down"))).toBe(true);
    expect(outbox.undeliverable()).toEqual([]);
  });

  it("a reply with a file: the text is sent once and recorded, a failed upload is tried again alone", async () => {
    const clock = new ManualClock();
    const { logger } = createMemoryLogger();
    const sent: OutboundMessage[] = [];
    let uploadFailures = 1;
    const withFiles = transport(sent, {
      capabilities: { maxTextLength: 100, attachments: true },
      send: async (m) => {
        if (m.attachments?.length && uploadFailures-- > 0) throw new Error("Telegram says 502: Bad Gateway");
        sent.push(m);
        return {};
      },
    });
    const outbox = new Outbox({ transport: () => withFiles, journal, clock, logger, warnAfterMs: 1000 });
    const jid = await journal.accept(msg("f1"), 1);
    const file = { kind: "document" as const, path: "/tmp/report.pdf", fileName: "report.pdf" };
    const handed = outbox.enqueue({
      channel: "t",
      chatId: "c",
      chatType: "group",
      text: "here it is",
      kind: "reply",
      jid,
      replyToMessageId: "7",
      attachments: [file],
    });
    expect(await handed).toBe("waiting");
    expect(journal.get(jid)?.delivered).toEqual([0]);
    clock.advance(500);
    await expect.poll(() => sent.length).toBe(2);
    await expect.poll(() => journal.openCount()).toBe(0);
    expect(sent).toEqual([
      {
        channel: "t",
        chatId: "c",
        chatType: "group",
        text: "here it is",
        kind: "reply",
        replyToMessageId: "7",
      },
      { channel: "t", chatId: "c", chatType: "group", text: "", kind: "reply", attachments: [file] },
    ]);
  });

  it("past the memory bound replies wait on disk and are all sent, in order, once the transport is back", async () => {
    const clock = new ManualClock();
    const { logger, lines } = createMemoryLogger();
    const sent: OutboundMessage[] = [];
    let up = false;
    const later = transport(sent, { capabilities: { maxTextLength: 100 } });
    const spillDir = join(dir, "spill");
    const outbox = new Outbox({
      transport: () => (up ? later : undefined),
      journal,
      clock,
      logger,
      warnAfterMs: 1000,
      maxParkedBytes: 20,
      spillDir,
    });
    const handed: Promise<string>[] = [];
    for (let i = 0; i < 6; i++) {
      const jid = await journal.accept(msg(`b${i}`), 1);
      handed.push(
        outbox.enqueue({
          channel: "t",
          chatId: i % 2 === 0 ? "even" : "odd",
          text: `reply ${i}`,
          kind: "reply",
          jid,
        }),
      );
    }
    expect(await Promise.all(handed)).toEqual(Array(6).fill("waiting"));
    await expect.poll(async () => (await readdir(spillDir)).length).toBeGreaterThan(0);
    up = true;
    outbox.wake("t");
    await expect.poll(() => sent.length).toBe(6);
    expect(sent.filter((m) => m.chatId === "even").map((m) => m.text)).toEqual([
      "reply 0",
      "reply 2",
      "reply 4",
    ]);
    expect(sent.filter((m) => m.chatId === "odd").map((m) => m.text)).toEqual([
      "reply 1",
      "reply 3",
      "reply 5",
    ]);
    await expect.poll(() => journal.openCount()).toBe(0);
    expect(await readdir(spillDir)).toEqual([]);
    expect(lines.some((l) => l.level === "error")).toBe(false);
  });

  it("logs once that replies have waited longer than warnAfterMs for a transport that is down", async () => {
    const clock = new ManualClock();
    const { logger, lines } = createMemoryLogger();
    const outbox = new Outbox({ transport: () => undefined, journal, clock, logger, warnAfterMs: 1000 });
    void outbox.enqueue({ channel: "t", chatId: "c", text: "one", kind: "reply" });
    await new Promise((r) => setImmediate(r));
    expect(outbox.parked()).toEqual([{ channel: "t", count: 1, oldestMs: 0, reported: false }]);
    clock.advance(2000);
    clock.advance(2000);
    const warned = lines.filter((l) => l.message.includes("for a transport that has been down"));
    expect(warned).toHaveLength(1);
    expect(outbox.parked()[0]).toMatchObject({ count: 1, reported: true });
    outbox.stop();
  });

  /** An outbox whose transport's sends wait until `release()`; `sent` lists what went through. */
  const gatedOutbox = () => {
    let release!: () => void;
    const gate = new Promise<void>((r) => {
      release = r;
    });
    const sent: OutboundMessage[] = [];
    const gated = transport(sent, {
      send: async (m) => {
        await gate;
        sent.push(m);
        return {};
      },
    });
    const { logger } = createMemoryLogger();
    const outbox = new Outbox({
      transport: () => gated,
      journal,
      clock: new ManualClock(),
      logger,
      warnAfterMs: 1000,
    });
    return { outbox, sent, release };
  };

  it("a reply that answers several messages ends every record the moment its send is through, not one fsync apart", async () => {
    const { outbox, sent, release } = gatedOutbox();
    const jids = [
      await journal.accept(msg("m1"), 1),
      await journal.accept(msg("m2"), 1),
      await journal.accept(msg("m3"), 1),
    ];
    void outbox.enqueue({
      channel: "t",
      chatId: "c",
      text: "hi",
      kind: "reply",
      jid: jids[0],
      alsoEnd: jids.slice(1),
    });
    await turn();
    release();
    // Microtasks only: no fsync can finish meanwhile (it runs on the threadpool), so what is in the file now was
    // written on the way from the send's answer, as a kill -9 right then would find it.
    for (let i = 0; i < 200 && sent.length === 0; i++) await Promise.resolve();
    for (let i = 0; i < 50; i++) await Promise.resolve();
    expect(sent).toHaveLength(1);
    const ends = readFileSync(journal.filePath, "utf8")
      .split("\n")
      .filter((line) => line.includes('"op":"end"'))
      .map((line) => (JSON.parse(line) as { jid: string }).jid);
    expect(ends.sort()).toEqual([...jids].sort());
    await expect.poll(() => journal.openCount()).toBe(0);
  });

  it("records a part the moment its transport says the chat app took it, before the send returns; a throw after that is not a retry", async () => {
    const { logger, lines } = createMemoryLogger();
    let release = () => {};
    const gate = new Promise<void>((r) => {
      release = r;
    });
    /** Per send: the journal's records of the reply as the file held them right after `confirmed` returned. */
    const seen: string[][] = [];
    const sends: string[] = [];
    const confirming = transport([], {
      send: async (m, _signal, confirmed) => {
        sends.push(m.text);
        confirmed?.();
        seen.push(
          readFileSync(journal.filePath, "utf8")
            .split("\n")
            .filter((line) => /"op":"(delivered|end)"/.test(line))
            .map((line) => {
              const record = JSON.parse(line) as { op: string; part?: number };
              return record.part === undefined ? record.op : `${record.op} ${record.part}`;
            }),
        );
        await gate;
        throw new Error("the connection broke after the answer");
      },
    });
    const outbox = new Outbox({
      transport: () => confirming,
      journal,
      clock: new ManualClock(),
      logger,
      warnAfterMs: 1000,
    });
    const jid = await journal.accept(msg("c1"), 1);
    const handed = outbox.enqueue({ channel: "t", chatId: "c", text: "aaaa bbbb cccc", kind: "reply", jid });
    await expect.poll(() => seen.length).toBe(1);
    // Part 0 is on record while its send still waits for its end.
    expect(seen[0]).toEqual(["delivered 0"]);
    release();
    expect(await handed).toBe("sent");
    expect(seen[1]).toEqual(["delivered 0", "end"]);
    // Each part went out once: the throws after `confirmed` were logged, not tried again.
    expect(sends).toEqual(["aaaa bbbb", "cccc"]);
    expect(lines.filter((l) => l.message.includes("counts as delivered"))).toHaveLength(2);
    await expect.poll(() => journal.openCount()).toBe(0);
  });

  it("stop lets a send in flight finish and end its record before it resolves", async () => {
    const { outbox, sent, release } = gatedOutbox();
    const jid = await journal.accept(msg("r3"), 1);
    void outbox.enqueue({ channel: "t", chatId: "c", text: "hello", kind: "reply", jid });
    await new Promise((r) => setImmediate(r));
    let stopped = false;
    const stopping = outbox.stop().then(() => {
      stopped = true;
    });
    await new Promise((r) => setImmediate(r));
    expect(stopped).toBe(false);
    release();
    await stopping;
    expect(sent).toHaveLength(1);
    expect(journal.openCount()).toBe(0);
  });
});
