import { mkdtemp, rm } from "node:fs/promises";
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

  it("tries a failed send again after the error's retryAfterMs, and ends the record once it is through", async () => {
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
    expect(sent).toEqual([]);
    clock.advance(1);
    await expect.poll(() => sent.length).toBe(1);
    await expect.poll(() => journal.openCount()).toBe(0);
  });

  it("gives a reply up after five failed tries while the transport is up, and ends its record failed-told", async () => {
    const clock = new ManualClock();
    const { logger, lines } = createMemoryLogger();
    const broken = transport([], {
      send: async () => {
        throw new Error("chat not found");
      },
    });
    const outbox = new Outbox({ transport: () => broken, journal, clock, logger, warnAfterMs: 1000 });
    const jid = await journal.accept(msg("r2"), 1);
    const handed = outbox.enqueue({ channel: "t", chatId: "c", text: "hello", kind: "reply", jid });
    for (let i = 0; i < 10; i++) {
      clock.advance(60_000);
      await new Promise((r) => setImmediate(r));
    }
    expect(await handed).toBe("waiting");
    await expect.poll(() => journal.openCount()).toBe(0);
    expect(
      lines.some((l) => l.level === "error" && l.message.includes("could not be delivered after 5 tries")),
    ).toBe(true);
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

  it("stop lets a send in flight finish and end its record before it resolves", async () => {
    const clock = new ManualClock();
    const { logger } = createMemoryLogger();
    let release!: () => void;
    const gate = new Promise<void>((r) => {
      release = r;
    });
    const sent: OutboundMessage[] = [];
    const slow = transport(sent, {
      send: async (m) => {
        await gate;
        sent.push(m);
        return {};
      },
    });
    const outbox = new Outbox({ transport: () => slow, journal, clock, logger, warnAfterMs: 1000 });
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
