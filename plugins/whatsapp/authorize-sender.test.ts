import { describe, expect, it } from "vitest";
import type { AuthorizeResult, InboundMessage } from "../../src/plugin-api/types.js";
import { authorizeSender, ownerLines, type WhatsappAuthorization } from "./authorize-sender.js";

const OWN = "+15550000001";
const FRIEND = "+15550000002";
const BOSS = "+15550000003";
const STRANGER = "+15550000009";

const msg = (senderId: string, chatType: "direct" | "group" = "direct"): InboundMessage => ({
  channel: "whatsapp",
  chatId: chatType === "group" ? "120363@g.us" : `${senderId.slice(1)}@s.whatsapp.net`,
  chatType,
  senderId,
  messageId: "1",
  text: "x",
  receivedAt: 0,
});

const settings = (over: Partial<WhatsappAuthorization> = {}): WhatsappAuthorization => ({
  allowFrom: [FRIEND],
  owners: undefined,
  ownNumber: OWN,
  senderIsLid: false,
  ...over,
});

describe("authorizeSender (WhatsApp)", () => {
  it.each<[string, WhatsappAuthorization, InboundMessage, AuthorizeResult]>([
    ["your own chat is the owner", settings(), msg(OWN), { allowed: true, authority: "owner" }],
    [
      "your own chat with an empty allowFrom",
      settings({ allowFrom: [] }),
      msg(OWN),
      { allowed: true, authority: "owner" },
    ],
    [
      "a listed friend is allowed, not the owner",
      settings(),
      msg(FRIEND),
      { allowed: true, authority: "allowed" },
    ],
    [
      "inbound.owner.whatsapp adds an owner",
      settings({ owners: [BOSS] }),
      msg(BOSS),
      { allowed: true, authority: "owner" },
    ],
    [
      "anyone under * is untrusted",
      settings({ allowFrom: ["*"] }),
      msg(STRANGER),
      { allowed: true, authority: "untrusted" },
    ],
    [
      "a group stranger is untrusted",
      settings(),
      msg(STRANGER, "group"),
      { allowed: true, authority: "untrusted" },
    ],
    [
      "a listed friend in a group is allowed",
      settings(),
      msg(FRIEND, "group"),
      { allowed: true, authority: "allowed" },
    ],
    [
      "a stranger's DM is denied",
      settings(),
      msg(STRANGER),
      { allowed: false, reason: `sender ${STRANGER} is not in inbound.allowFrom` },
    ],
    [
      "an unmapped LID is denied and says why",
      settings({ senderIsLid: true }),
      msg("123@lid"),
      {
        allowed: false,
        reason:
          "sender 123@lid writes as a LID whose phone number WhatsApp has not told us; it cannot match inbound.allowFrom",
      },
    ],
  ])("%s", (_what, s, message, expected) => {
    expect(authorizeSender(s, message)).toEqual(expected);
  });
});

describe("ownerLines (WhatsApp)", () => {
  it("names your own number and the listed owners, and warns about ids that match nobody", () => {
    expect(ownerLines(OWN, undefined)).toEqual([
      {
        level: "info",
        text: `owner on whatsapp: ${OWN} (your own number); set inbound.owner.whatsapp to add others`,
      },
    ]);
    expect(ownerLines(OWN, [BOSS, "4915"])).toEqual([
      {
        level: "info",
        text: `owner on whatsapp: ${OWN} (your own number), ${BOSS} (inbound.owner.whatsapp), 4915 (inbound.owner.whatsapp)`,
      },
      {
        level: "warn",
        text: 'inbound.owner.whatsapp[1] "4915" is not an E.164 number like "+4915123456789": it matches nobody',
      },
    ]);
  });
});
