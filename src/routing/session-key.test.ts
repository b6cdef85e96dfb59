import { describe, expect, it } from "vitest";
import { type SessionKeyConfig, type SessionKeyInput, sessionKeyFor, sessionKindOf } from "./session-key.js";

const perSender: SessionKeyConfig = { scope: "per-sender", mainKey: "main" };
const renamed: SessionKeyConfig = { scope: "per-sender", mainKey: "me" };
const global: SessionKeyConfig = { scope: "global", mainKey: "main" };

describe("sessionKeyFor", () => {
  const cases: [string, SessionKeyInput, SessionKeyConfig, string][] = [
    ["WhatsApp direct", { chatType: "direct", chatId: "4915123456789@s.whatsapp.net" }, perSender, "main"],
    ["Telegram direct", { chatType: "direct", chatId: "123456" }, perSender, "main"],
    ["web chat direct", { chatType: "direct", chatId: "webchat" }, perSender, "main"],
    ["renamed mainKey", { chatType: "direct", chatId: "123456" }, renamed, "me"],
    ["WhatsApp group", { chatType: "group", chatId: "12036302@g.us" }, perSender, "group:12036302@g.us"],
    ["Telegram group", { chatType: "group", chatId: "-1001234" }, perSender, "group:-1001234"],
    ["group, renamed mainKey", { chatType: "group", chatId: "-1001234" }, renamed, "group:-1001234"],
    ["global direct", { chatType: "direct", chatId: "123456" }, global, "global"],
    ["global group", { chatType: "group", chatId: "12036302@g.us" }, global, "global"],
    ["explicit key wins", { chatType: "group", chatId: "-1", sessionKey: "hook:ci" }, perSender, "hook:ci"],
    [
      "explicit key wins over global",
      { chatType: "direct", chatId: "1", sessionKey: "main" },
      global,
      "main",
    ],
    ["empty explicit key ignored", { chatType: "direct", chatId: "1", sessionKey: "" }, perSender, "main"],
  ];
  it.each(cases)("%s", (_name, message, session, expected) => {
    expect(sessionKeyFor(message, session)).toBe(expected);
  });
});

describe("sessionKindOf", () => {
  const cases: [string, string | undefined, string][] = [
    ["main", undefined, "direct"],
    ["me", "me", "direct"],
    ["global", undefined, "global"],
    ["group:12036302@g.us", undefined, "group"],
    ["group:-1001234", "main", "group"],
    ["hook:ci", undefined, "direct"],
    ["groupie", undefined, "direct"],
  ];
  it.each(cases)("%s (mainKey %s) is %s", (key, mainKey, kind) => {
    expect(sessionKindOf(key, mainKey)).toBe(kind);
  });
});
