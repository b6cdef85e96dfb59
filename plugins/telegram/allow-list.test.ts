import { describe, expect, it } from "vitest";
import type { InboundMessage } from "../../src/plugin-api/types.js";
import { allowFromWarnings, authorizeSender } from "./allow-list.js";

const msg = (senderId: string, chatId = senderId): InboundMessage => ({
  channel: "telegram",
  chatId,
  chatType: "direct",
  senderId,
  messageId: "1",
  text: "x",
  receivedAt: 0,
});

describe("authorizeSender", () => {
  it.each([
    [[], "7", undefined, false],
    [[7], "7", undefined, true],
    [["7"], "7", undefined, true],
    [["@Alice"], "7", "alice", true],
    // The username as Telegram sends it may have capitals the config does not.
    [["@alice"], "7", "Alice", true],
    [["@alice"], "7", "ALICE", true],
    [["@alice"], "7", undefined, false],
    [["*"], "7", undefined, true],
    [[8], "7", "alice", false],
  ] as const)("allowFrom %j, sender %s (@%s): %s", (allowFrom, sender, username, allowed) => {
    expect(authorizeSender(allowFrom, msg(sender), username).allowed).toBe(allowed);
  });

  it("a group listed by its chat id lets everyone in it talk", () => {
    expect(authorizeSender([-100], msg("7", "-100"), undefined).allowed).toBe(true);
  });

  it("a denial names the setting and the id to add", () => {
    expect(authorizeSender([], msg("7"), "alice")).toEqual({
      allowed: false,
      reason: "sender 7 (@alice) is not in telegram.allowFrom; add 7 there to let them talk to the agent",
    });
  });
});

describe("allowFromWarnings", () => {
  it("says how to find your id when empty, warns about *, and is quiet otherwise", () => {
    expect(allowFromWarnings([])[0]).toMatch(
      /nobody can talk to the bot.*sender <id> is not in telegram\.allowFrom/,
    );
    expect(allowFromWarnings(["*"])[0]).toMatch(/everybody/);
    expect(allowFromWarnings([7, "@a"])).toEqual([]);
  });
});
