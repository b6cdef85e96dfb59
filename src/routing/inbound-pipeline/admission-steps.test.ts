import { describe, expect, it } from "vitest";
import type { InboundMessage, ReceiveResult } from "../../plugin-api/types.js";
import type { WorkItem } from "../../runtime/work-item.js";
import { allowStep, dedupeStep, journalStep, sessionKeyStep } from "./admission-steps.js";
import { compose, type InboundContext, type Step } from "./types.js";

const message = (fields: Partial<InboundMessage> = {}): InboundMessage => ({
  channel: "chat",
  chatId: "c1",
  chatType: "direct",
  senderId: "alice",
  messageId: "m1",
  text: "hi",
  receivedAt: 1,
  ...fields,
});

/** Runs one step; says whether it called `next` and what it left in the context. */
async function run(step: Step, ctx: InboundContext): Promise<{ next: boolean; ctx: InboundContext }> {
  let next = false;
  await step(ctx, async () => {
    next = true;
  });
  return { next, ctx };
}

describe("admission steps", () => {
  it.each([
    [true, { status: "duplicate" }, false],
    [false, undefined, true],
  ])("dedupe: seen=%s → result %j, next %s", async (seen, result, next) => {
    const out = await run(dedupeStep({ isDuplicate: () => seen }), { message: message(), local: false });
    expect(out.ctx.result).toEqual(result);
    expect(out.next).toBe(next);
  });

  const allowed = { authorize: () => ({ allowed: true as const }) };
  const refused = { authorize: () => ({ allowed: false as const, reason: "not listed" }) };
  it.each([
    ["a local message passes without a transport", true, undefined, undefined, true],
    [
      "no transport of that channel: denied",
      false,
      undefined,
      { status: "denied", reason: 'no running transport "chat"' },
      false,
    ],
    ["the transport allows", false, allowed, undefined, true],
    [
      "the transport refuses: denied with its reason, logged",
      false,
      refused,
      { status: "denied", reason: "not listed" },
      false,
    ],
  ])("allow: %s", async (_label, local, transport, result, next) => {
    const denied: string[] = [];
    const out = await run(
      allowStep({ inputTransport: () => transport, logDenied: (_m, reason) => denied.push(reason) }),
      { message: message(), local },
    );
    expect(out.ctx.result).toEqual(result);
    expect(out.next).toBe(next);
    expect(denied).toEqual(transport === refused ? ["not listed"] : []);
  });

  it("internal input passes without a transport, its authority kept; a plugin's `internal` field is removed", async () => {
    const denyAll = { authorize: () => ({ allowed: false as const, reason: "not listed" }) };
    const allowAll = { authorize: () => ({ allowed: true as const }) };
    const internal = message({ authority: "untrusted", internal: { kind: "reminder" } });
    const core = await run(allowStep({ inputTransport: () => denyAll, logDenied: () => {} }), {
      message: internal,
      local: false,
      internal: true,
    });
    expect(core.next).toBe(true);
    expect(core.ctx.message).toEqual(internal);
    const plugin = await run(allowStep({ inputTransport: () => allowAll, logDenied: () => {} }), {
      message: internal,
      local: false,
    });
    expect(plugin.next).toBe(true);
    expect(plugin.ctx.message.internal).toBeUndefined();
    expect(plugin.ctx.message.authority).toBe("allowed");
  });

  it.each([
    ["main", "main", true],
    ["group:-100", "group:-100", true],
    ["x".repeat(257), undefined, false],
    ["bad\u0000key", undefined, false],
  ])("session key %j → %s (next %s)", async (key, stored, next) => {
    const out = await run(sessionKeyStep({ sessionKeyFor: () => key }), { message: message(), local: true });
    expect(out.ctx.sessionKey).toBe(stored);
    expect(out.next).toBe(next);
    if (!next)
      expect(out.ctx.result).toMatchObject({
        status: "denied",
        reason: expect.stringMatching(/^session key refused/),
      });
  });

  it("journal: accepts, then goes on with the item", async () => {
    const item = { jid: "j1" } as WorkItem;
    const result: ReceiveResult = { status: "accepted", journalId: "j1", done: new Promise(() => {}) };
    const out = await run(journalStep({ accept: async () => ({ item, result }) }), {
      message: message(),
      local: false,
      sessionKey: "main",
    });
    expect(out.ctx.item).toBe(item);
    expect(out.ctx.result).toBe(result);
    expect(out.next).toBe(true);
  });

  it("in order: a denied sender is never journaled, a duplicate is never authorized", async () => {
    const calls: string[] = [];
    const pipeline = (seen: boolean, verdict: boolean) =>
      compose([
        dedupeStep({
          isDuplicate: () => {
            calls.push("dedupe");
            return seen;
          },
        }),
        allowStep({
          inputTransport: () => ({
            authorize: () => {
              calls.push("allow");
              return verdict ? { allowed: true } : { allowed: false, reason: "no" };
            },
          }),
          logDenied: () => {},
        }),
        sessionKeyStep({
          sessionKeyFor: () => {
            calls.push("key");
            return "main";
          },
        }),
        journalStep({
          accept: async () => {
            calls.push("journal");
            return {
              item: {} as WorkItem,
              result: { status: "accepted", journalId: "j", done: new Promise(() => {}) },
            };
          },
        }),
      ]);
    await pipeline(false, false)({ message: message(), local: false });
    expect(calls.splice(0)).toEqual(["dedupe", "allow"]);
    await pipeline(true, true)({ message: message(), local: false });
    expect(calls.splice(0)).toEqual(["dedupe"]);
    await pipeline(false, true)({ message: message(), local: false });
    expect(calls.splice(0)).toEqual(["dedupe", "allow", "key", "journal"]);
  });
});
