import { mkdir, mkdtemp, readFile, rename, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { ManualClock } from "../core/clock.js";
import { defaultConfig } from "../core/config-schema.js";
import { createMemoryLogger } from "../core/logger.js";
import { chooseSession } from "../runtime/choose-session.js";
import {
  type DecideSessionInput,
  decideSession,
  freshEntry,
  isIdleExpired,
  matchResetTrigger,
  type ResetMatch,
  touchInteraction,
} from "./lifecycle.js";
import { SessionStore } from "./store.js";
import type { SessionEntry } from "./types.js";

const MIN = 60_000;

describe("matchResetTrigger", () => {
  const triggers = ["/new"];
  const cases: [string, string[], ResetMatch][] = [
    ["/new", triggers, { matched: true, trigger: "/new", rest: "" }],
    ["  /new \n", triggers, { matched: true, trigger: "/new", rest: "" }],
    ["/new Hello World", triggers, { matched: true, trigger: "/new", rest: "Hello World" }],
    ["/new  Hello  World", triggers, { matched: true, trigger: "/new", rest: " Hello  World" }],
    ["/new WHAT is UP?  ", triggers, { matched: true, trigger: "/new", rest: "WHAT is UP?" }],
    ["/new line one\nline two", triggers, { matched: true, trigger: "/new", rest: "line one\nline two" }],
    ["/newx", triggers, { matched: false }],
    ["/NEW", triggers, { matched: false }],
    ["x /new", triggers, { matched: false }],
    ["/new\thello", triggers, { matched: false }],
    ["/new\nhello", triggers, { matched: false }],
    ["", triggers, { matched: false }],
    ["/new", [], { matched: false }],
    ["/reset now", ["/new", "/reset"], { matched: true, trigger: "/reset", rest: "now" }],
    ["/new chat hi", ["/new", "/new chat"], { matched: true, trigger: "/new chat", rest: "hi" }],
    ["/new hi", ["/new", "/new chat"], { matched: true, trigger: "/new", rest: "hi" }],
    ["anything", ["", "  "], { matched: false }],
  ];
  it.each(cases)("%j with %j", (text, list, expected) => {
    expect(matchResetTrigger(text, list)).toEqual(expected);
  });
});

describe("isIdleExpired", () => {
  const now = Date.UTC(2026, 5, 1, 12);
  const cases: [string, Partial<SessionEntry>, number, boolean][] = [
    ["59 min", { lastInteractionAt: now - 59 * MIN }, 60, false],
    ["exactly 60 min", { lastInteractionAt: now - 60 * MIN }, 60, false],
    ["60 min + 1 ms", { lastInteractionAt: now - 60 * MIN - 1 }, 60, true],
    ["61 min", { lastInteractionAt: now - 61 * MIN }, 60, true],
    [
      "lastInteractionAt wins over a recent updatedAt",
      { lastInteractionAt: now - 61 * MIN, updatedAt: now },
      60,
      true,
    ],
    ["falls back to updatedAt", { updatedAt: now - 61 * MIN }, 60, true],
    ["fallback, recent", { updatedAt: now - 10 * MIN }, 60, false],
    ["future timestamp", { lastInteractionAt: now + 100 * MIN }, 60, false],
    ["no usable timestamp", { updatedAt: Number.NaN }, 60, false],
    ["idleMinutes 0 disables", { lastInteractionAt: now - 1000 * MIN }, 0, false],
  ];
  it.each(cases)("%s", (_name, fields, idleMinutes, expected) => {
    const entry = { sessionId: "s", updatedAt: now, ...fields } as SessionEntry;
    expect(isIdleExpired(entry, now, idleMinutes)).toBe(expected);
  });
});

describe("decideSession", () => {
  const now = Date.UTC(2026, 5, 1, 12);
  const active: SessionEntry = { sessionId: "s1", updatedAt: now - MIN, lastInteractionAt: now - MIN };
  const base: DecideSessionInput = {
    entry: active,
    transcriptExists: true,
    now,
    idleMinutes: 60,
    reset: false,
  };
  const cases: [string, Partial<DecideSessionInput>, ReturnType<typeof decideSession>][] = [
    ["active session continues", {}, { action: "continue", sessionId: "s1" }],
    ["no entry", { entry: undefined }, { action: "fresh", reason: "new-key" }],
    [
      "entry without sessionId",
      { entry: { updatedAt: now } as SessionEntry },
      { action: "fresh", reason: "new-key" },
    ],
    ["reset trigger", { reset: true }, { action: "fresh", reason: "reset" }],
    [
      "reset wins over a missing transcript",
      { reset: true, transcriptExists: false },
      { action: "fresh", reason: "reset" },
    ],
    [
      "transcript deleted by hand",
      { transcriptExists: false },
      { action: "fresh", reason: "transcript-missing" },
    ],
    [
      "brand-new entry, transcript not written yet",
      { entry: { sessionId: "s2", updatedAt: now, createdAt: now }, transcriptExists: false },
      { action: "continue", sessionId: "s2" },
    ],
    [
      "hand-made entry without transcript",
      { entry: { sessionId: "mine", updatedAt: now - 5 * MIN }, transcriptExists: false },
      { action: "continue", sessionId: "mine" },
    ],
    [
      "idle",
      { entry: { ...active, lastInteractionAt: now - 61 * MIN } },
      { action: "fresh", reason: "idle" },
    ],
    [
      "transcript missing wins over idle",
      { entry: { ...active, lastInteractionAt: now - 61 * MIN }, transcriptExists: false },
      { action: "fresh", reason: "transcript-missing" },
    ],
  ];
  it.each(cases)("%s", (_name, overrides, expected) => {
    expect(decideSession({ ...base, ...overrides })).toEqual(expected);
  });
});

describe("the seed config with a clock (idleMinutes 60, resetTriggers ['/new'])", () => {
  const session = defaultConfig().inbound.reply.session;

  /** What a caller does with a person's message: decide, make a fresh entry if needed, touch. */
  function handleMessage(entry: SessionEntry | undefined, text: string, now: number, nextId: string) {
    const reset = matchResetTrigger(text, session.resetTriggers);
    const decision = decideSession({
      entry,
      transcriptExists: entry !== undefined,
      now,
      idleMinutes: session.idleMinutes,
      reset: reset.matched,
    });
    const base = decision.action === "continue" ? entry! : freshEntry(entry, nextId, now);
    return { decision, entry: touchInteraction(base, now) };
  }

  it("continues at 59 min, starts fresh at 61 min, and /status does not keep the session alive", () => {
    expect(session.idleMinutes).toBe(60);
    expect(session.resetTriggers).toEqual(["/new"]);
    const clock = new ManualClock();
    const first = handleMessage(undefined, "hi", clock.now(), "s1");
    expect(first.decision).toEqual({ action: "fresh", reason: "new-key" });
    expect(first.entry.lastInteractionAt).toBe(clock.now());

    clock.advance(59 * MIN);
    const second = handleMessage(first.entry, "still there?", clock.now(), "s2");
    expect(second.decision).toEqual({ action: "continue", sessionId: "s1" });

    // /status 30 minutes later is answered without touching lastInteractionAt (callers only touch on a
    // person's message or a reply), so it does not push the expiry back.
    clock.advance(30 * MIN);
    const afterStatus = { ...second.entry, updatedAt: clock.now() };
    clock.advance(31 * MIN);
    expect(isIdleExpired(afterStatus, clock.now(), session.idleMinutes)).toBe(true);
    const third = handleMessage(afterStatus, "good morning", clock.now(), "s3");
    expect(third.decision).toEqual({ action: "fresh", reason: "idle" });
    expect(third.entry.sessionId).toBe("s3");

    const fourth = handleMessage(third.entry, "/new let's start over", clock.now(), "s4");
    expect(fourth.decision).toEqual({ action: "fresh", reason: "reset" });
    expect(fourth.entry.sessionId).toBe("s4");
  });
});

describe("touchInteraction / freshEntry", () => {
  it("touch sets lastInteractionAt and updatedAt and keeps the rest", () => {
    const entry: SessionEntry = { sessionId: "s", updatedAt: 1, thinkingLevel: "high", custom: { a: 1 } };
    const touched = touchInteraction(entry, 500);
    expect(touched).toEqual({ ...entry, updatedAt: 500, lastInteractionAt: 500 });
    expect(entry.updatedAt).toBe(1);
  });

  it("fresh keeps preferences and unknown fields, clears counters", () => {
    const previous: SessionEntry = {
      sessionId: "old",
      updatedAt: 1,
      createdAt: 1,
      lastInteractionAt: 1,
      thinkingLevel: "high",
      verboseLevel: "on",
      inputTokens: 10,
      outputTokens: 20,
      totalTokens: 30,
      contextTokens: 40,
      contextEstimated: true,
      compactionCount: 2,
      model: "m",
      origin: { channel: "telegram", chatId: "1", chatType: "direct" },
      myNote: "keep me",
    };
    expect(freshEntry(previous, "new", 1000)).toEqual({
      sessionId: "new",
      updatedAt: 1000,
      createdAt: 1000,
      thinkingLevel: "high",
      verboseLevel: "on",
      model: "m",
      origin: { channel: "telegram", chatId: "1", chatType: "direct" },
      myNote: "keep me",
    });
    expect(previous.inputTokens).toBe(10);
    expect(freshEntry(undefined, "n", 5)).toEqual({ sessionId: "n", updatedAt: 5, createdAt: 5 });
  });
});

describe("chooseSession against a real store", () => {
  let dir: string;
  let path: string;
  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), "clawdis-choose-"));
    path = join(dir, "sessions.json");
  });
  afterEach(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it("replaces an entry whose sessionId was refused with a new id, keeping every other field", async () => {
    const refused = {
      sessionId: "../../outside",
      updatedAt: 5,
      thinkingLevel: "high",
      myField: { nested: [1, 2] },
      inputTokens: 99,
    };
    await writeFile(path, JSON.stringify({ main: refused }));
    const { logger, lines } = createMemoryLogger();
    const store = new SessionStore({ path, logger });
    const { sessionId } = await chooseSession({ store, logger, idleMinutes: 60 }, "main", false, 1000);
    expect(sessionId).not.toBe(refused.sessionId);
    const main = JSON.parse(await readFile(path, "utf8")).main;
    expect(main).toEqual({
      sessionId,
      updatedAt: 1000,
      createdAt: 1000,
      thinkingLevel: "high",
      myField: { nested: [1, 2] },
    });
    const warning = lines.find((l) => l.level === "warn" && l.message.includes("not a safe file name"));
    expect(warning?.fields).toMatchObject({ sessionKey: "main", refusedSessionId: '"../../outside"' });
  });

  /** A store whose reads see the file missing once (say, another program replaced it by delete + create). */
  class StoreThatMissedTheFile extends SessionStore {
    putBack: (() => Promise<void>) | undefined;
    override async getWithUpdates(key: string): Promise<SessionEntry | undefined> {
      const entry = await super.getWithUpdates(key);
      const putBack = this.putBack;
      this.putBack = undefined;
      await putBack?.();
      return entry;
    }
  }

  it("does not replace an entry that was there again by the time of the update", async () => {
    const { logger, lines } = createMemoryLogger();
    const store = new StoreThatMissedTheFile({ path, logger });
    await store.update("main", () => ({ sessionId: "m-1", updatedAt: 1, lastInteractionAt: 900 }));
    await writeFile(join(dir, "m-1.jsonl"), "{}\n");
    await rename(path, `${path}.away`);
    store.putBack = () => rename(`${path}.away`, path);
    const { sessionId } = await chooseSession({ store, logger, idleMinutes: 60 }, "main", false, 1000);
    expect(sessionId).toBe("m-1");
    expect(JSON.parse(await readFile(path, "utf8")).main.sessionId).toBe("m-1");
    expect(lines.some((l) => l.message === "new session")).toBe(false);
  });

  it("starts a new session for a new key, and continues it afterwards", async () => {
    await mkdir(dir, { recursive: true });
    const { logger } = createMemoryLogger();
    const store = new SessionStore({ path, logger });
    const first = await chooseSession({ store, logger, idleMinutes: 60 }, "group:1", false, 1000);
    const again = await chooseSession({ store, logger, idleMinutes: 60 }, "group:1", false, 2000);
    expect(again.sessionId).toBe(first.sessionId);
  });
});
