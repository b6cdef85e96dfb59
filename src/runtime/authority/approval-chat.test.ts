import { describe, expect, it } from "vitest";
import { type PromptChat, promptChat } from "./approval-chat.js";
import type { Authority } from "./authority.js";

describe("promptChat", () => {
  const hook: PromptChat = { channel: "webhook", chatId: "hook:ci", chatType: "direct" };
  const alice: PromptChat = { channel: "telegram", chatId: "1", chatType: "direct" };
  const owner: PromptChat = { channel: "telegram", chatId: "111", chatType: "direct" };
  const rows: [string, PromptChat, Authority, PromptChat | undefined, PromptChat][] = [
    ["an automated turn asks in the owner's chat", hook, "automated", owner, owner],
    [
      "an automated turn whose session the owner never wrote in asks in its own chat",
      hook,
      "automated",
      undefined,
      hook,
    ],
    ["a person's turn asks in its own chat, not the owner's", alice, "allowed", owner, alice],
    ["an untrusted person's turn asks in its own chat", alice, "untrusted", owner, alice],
    ["the owner's turn asks in its own chat (the one they wrote from)", alice, "owner", owner, alice],
  ];
  it.each(rows)("%s", (_, turn, requester, ownerChat, expected) => {
    expect(promptChat(turn, requester, ownerChat)).toEqual(expected);
  });
});
