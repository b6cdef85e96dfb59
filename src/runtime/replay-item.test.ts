import { describe, expect, it } from "vitest";
import type { InboundMessage } from "../plugin-api/types.js";
import type { OpenRecord } from "../sessions/journal.js";
import { replayItem } from "./replay-item.js";

const record = (message: Partial<InboundMessage>, local?: boolean): OpenRecord => ({
  jid: "j1",
  message: {
    channel: "telegram",
    chatId: "42",
    chatType: "direct",
    senderId: "alice",
    messageId: "m1",
    text: "hi",
    receivedAt: 1,
    ...message,
  },
  ...(local === undefined ? {} : { local }),
  acceptedAt: 1,
  delivered: [],
  bytes: 10,
});

const deps = { hasPlugin: (channel: string) => channel === "telegram", sessionKeyFor: () => "main" };

describe("replayItem", () => {
  it.each<[string, OpenRecord, { local: boolean; authority: string }]>([
    [
      "a transport's message keeps its authority",
      record({ authority: "owner" }, false),
      { local: false, authority: "owner" },
    ],
    [
      "a transport's message from before authorities: allowed, never the owner",
      record({}, false),
      { local: false, authority: "allowed" },
    ],
    [
      "a local message from before authorities: the owner",
      record({ channel: "cli" }, true),
      { local: true, authority: "owner" },
    ],
    [
      "before version 2, a channel no plugin has is the local API's",
      record({ channel: "cli" }),
      { local: true, authority: "owner" },
    ],
    [
      "before version 2, a plugin's channel is a transport's",
      record({}),
      { local: false, authority: "allowed" },
    ],
    [
      "automated input stays automated",
      record({ automated: true }, false),
      { local: false, authority: "automated" },
    ],
  ])("%s", (_what, open, expected) => {
    const item = replayItem(open, deps);
    expect({ local: item.local, authority: item.message.authority }).toEqual(expected);
    expect(item).toMatchObject({ jid: "j1", sessionKey: "main", text: "hi", restored: open });
  });
});
