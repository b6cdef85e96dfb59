import { proto, type WAMessage } from "@whiskeysockets/baileys";
import { describe, expect, it } from "vitest";
import { e164, type InboundView, toInbound } from "./to-inbound.js";

/**
 * The cases Baileys' receive path does not produce from a peer's message in the other tests: what is not input.
 * Messages are real `proto.WebMessageInfo` objects as Baileys emits them.
 */

const view: InboundView = {
  channel: "whatsapp",
  me: { phoneJid: "15550001111@s.whatsapp.net", lidJid: "900@lid" },
  mentionPatterns: [],
  phoneForLid: () => undefined,
  sentByUs: () => false,
  receivedAt: 1_000_000,
};

const info = (fields: object): WAMessage => proto.WebMessageInfo.fromObject(fields) as WAMessage;
const from = (remoteJid: string, message: object, key: object = {}) =>
  info({ key: { remoteJid, id: "ID1", fromMe: false, ...key }, message, messageTimestamp: 900 });

describe("toInbound: what is not input", () => {
  it.each([
    [
      "a status post",
      from("status@broadcast", { conversation: "story" }, { participant: "49@s.whatsapp.net" }),
    ],
    ["a broadcast list", from("12345@broadcast", { conversation: "hi" })],
    ["a newsletter", from("123@newsletter", { conversation: "news" })],
    [
      "a reaction",
      from("4915112345678@s.whatsapp.net", { reactionMessage: { text: "👍", key: { id: "X" } } }),
    ],
    [
      "an edit or revoke",
      from("4915112345678@s.whatsapp.net", { protocolMessage: { type: 0, key: { id: "X" } } }),
    ],
    ["no content", info({ key: { remoteJid: "4915112345678@s.whatsapp.net", id: "ID1" } })],
    ["an empty text", from("4915112345678@s.whatsapp.net", { conversation: "" })],
    [
      "the account's own message to someone",
      from("4915112345678@s.whatsapp.net", { conversation: "hi" }, { fromMe: true }),
    ],
    [
      "the account's own message in a group",
      from("1203@g.us", { conversation: "hi" }, { fromMe: true, participant: "15550001111@s.whatsapp.net" }),
    ],
  ])("skips %s", (_name, message) => {
    expect(toInbound(message, view).ok).toBe(false);
  });

  it("keeps WhatsApp's timestamp when it is older than the arrival (an offline backlog)", () => {
    const result = toInbound(from("4915112345678@s.whatsapp.net", { conversation: "hi" }), view);
    expect(result.ok && result.message.receivedAt).toBe(900_000);
  });
});

describe("e164", () => {
  it.each([
    ["4915112345678@s.whatsapp.net", "+4915112345678"],
    ["4915112345678:12@s.whatsapp.net", "+4915112345678"],
    ["123456789012345@lid", undefined],
    ["1203@g.us", undefined],
    [undefined, undefined],
  ])("%s -> %s", (jid, expected) => {
    expect(e164(jid)).toBe(expected);
  });
});
