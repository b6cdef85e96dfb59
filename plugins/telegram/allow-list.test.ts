import { describe, expect, it } from "vitest";
import type { InboundMessage } from "../../src/plugin-api/types.js";
import { allowFromWarnings, authorizeSender, ownerLine, telegramOwners } from "./allow-list.js";

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
    [[], [], "7", undefined, false],
    [[7], [], "7", undefined, true],
    [["7"], [], "7", undefined, true],
    [["@Alice"], [], "7", "alice", true],
    // The username as Telegram sends it may have capitals the config does not.
    [["@alice"], [], "7", "Alice", true],
    [["@alice"], [], "7", "ALICE", true],
    [["@alice"], [], "7", undefined, false],
    [["*"], [], "7", undefined, true],
    [[8], [], "7", "alice", false],
    [[], ["7"], "7", undefined, true],
  ] as const)(
    "allowFrom %j, owners %j, sender %s (@%s): %s",
    (allowFrom, owners, sender, username, allowed) => {
      expect(authorizeSender(allowFrom, owners, msg(sender), username).allowed).toBe(allowed);
    },
  );

  it.each([
    ["an owner by id", [111, 222], ["111"], msg("111"), undefined, "owner"],
    ["an owner by @username", [111], ["@alice"], msg("7"), "Alice", "owner"],
    ["a listed user who is not the owner", [111, 222], ["111"], msg("222"), undefined, "allowed"],
    ["a listed @username", [111, "@Bob"], ["111"], msg("5"), "bob", "allowed"],
    ["a stranger in a listed group", [111, -100], ["111"], msg("999", "-100"), undefined, "untrusted"],
    ["anyone under *", ["*"], [], msg("999"), undefined, "untrusted"],
    ["the owner in a listed group", [111, -100], ["111"], msg("111", "-100"), undefined, "owner"],
  ] as const)("%s: %s", (_what, allowFrom, owners, message, username, authority) => {
    expect(authorizeSender(allowFrom, owners, message, username)).toEqual({ allowed: true, authority });
  });

  it("a denial names the setting and the id to add", () => {
    expect(authorizeSender([], [], msg("7"), "alice")).toEqual({
      allowed: false,
      reason: "sender 7 (@alice) is not in telegram.allowFrom; add 7 there to let them talk to the agent",
    });
  });
});

describe("telegramOwners", () => {
  it.each([
    [[111, "@bob"], undefined, ["111"], "allowFrom"],
    [["*", -100, "@Bob", 111], undefined, ["@bob"], "allowFrom"],
    [["*"], undefined, [], "allowFrom"],
    [[-100], undefined, [], "allowFrom"],
    [[111], ["222", "@Carol"], ["222", "@carol"], "inbound.owner"],
    [[111], [], [], "inbound.owner"],
  ] as const)("allowFrom %j, inbound.owner.telegram %j: %j", (allowFrom, configured, ids, source) => {
    expect(telegramOwners(allowFrom, configured)).toEqual({ ids, source });
  });
});

describe("ownerLine", () => {
  it("names the owner and where it comes from, warns when there is none", () => {
    expect(ownerLine([111, "@bob"], undefined)).toEqual({
      level: "info",
      text: "owner on telegram: 111 (the first of telegram.allowFrom; set inbound.owner to change)",
    });
    expect(ownerLine([111], ["222"])).toEqual({
      level: "info",
      text: "owner on telegram: 222 (inbound.owner.telegram)",
    });
    expect(ownerLine(["*"], undefined)).toMatchObject({ level: "warn", text: /^no owner on telegram/ });
    expect(ownerLine([111], [])).toMatchObject({ level: "warn", text: /inbound\.owner\.telegram is empty/ });
    expect(ownerLine([], undefined)).toBeUndefined();
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
