import { describe, expect, it } from "vitest";
import type { InboundMessage } from "../../plugin-api/types.js";
import type { WorkItem } from "../../runtime/work-item.js";
import { enqueueStep, isAddressed, mentionGateStep } from "./dispatch-steps.js";
import type { InboundContext } from "./types.js";

const message = (fields: Partial<InboundMessage> = {}): InboundMessage => ({
  channel: "chat",
  chatId: "g1",
  chatType: "group",
  senderId: "alice",
  messageId: "m1",
  text: "hello all",
  receivedAt: 1,
  ...fields,
});
const group = (fields: Partial<{ requireMention: boolean; mentionPatterns: string[] }> = {}) => ({
  requireMention: true,
  mentionPatterns: [],
  historyLimit: 50,
  ...fields,
});
const itemOf = (m: InboundMessage): WorkItem => ({
  jid: "j",
  message: m,
  text: m.text,
  local: false,
  sessionKey: "group:g1",
  resolve: () => {},
});

describe("isAddressed", () => {
  it.each([
    ["a plain group message", {}, {}, false],
    ["mentioned by the transport", { mentioned: true }, {}, true],
    ["a reply to the agent", { replyTo: { messageId: "x", fromAgent: true } }, {}, true],
    ["a reply to someone else", { replyTo: { messageId: "x" } }, {}, false],
    [
      "a pattern that matches (case-insensitive)",
      { text: "Hey @CLAWD" },
      { mentionPatterns: ["@clawd"] },
      true,
    ],
    [
      "a pattern that is not a regex matches as text",
      { text: "ask [bot" },
      { mentionPatterns: ["[bot"] },
      true,
    ],
    ["requireMention off", {}, { requireMention: false }, true],
  ])("%s → %s", (_label, fields, config, expected) => {
    expect(isAddressed(message(fields as Partial<InboundMessage>), group(config))).toBe(expected);
  });
});

describe("dispatch steps", () => {
  async function gate(m: InboundMessage) {
    const enqueued: WorkItem[] = [];
    const ctx: InboundContext = { message: m, local: false, item: itemOf(m) };
    let next = false;
    await mentionGateStep({ groupChat: () => group(), enqueue: (item) => enqueued.push(item) })(
      ctx,
      async () => {
        next = true;
      },
    );
    return { next, enqueued, item: ctx.item! };
  }

  it("an unaddressed group message goes to its session as context only", async () => {
    const out = await gate(message());
    expect(out.next).toBe(false);
    expect(out.enqueued).toEqual([out.item]);
    expect(out.item.contextOnly).toBe(true);
  });

  it.each([
    ["an addressed group message", message({ mentioned: true })],
    ["a direct message", message({ chatType: "direct" })],
    ["automated input", message({ automated: true })],
  ])("%s goes on", async (_label, m) => {
    const out = await gate(m);
    expect(out.next).toBe(true);
    expect(out.enqueued).toEqual([]);
    expect(out.item.contextOnly).toBeUndefined();
  });

  it("enqueue hands the item to the session's queue", async () => {
    const queued: WorkItem[] = [];
    const item = itemOf(message());
    await enqueueStep({ enqueue: (i) => queued.push(i) })(
      { message: item.message, local: false, item },
      async () => {},
    );
    expect(queued).toEqual([item]);
  });
});
