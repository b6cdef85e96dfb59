import { describe, expect, it } from "vitest";
import { cleanTitle, firstExchange, TITLE_MAX_CHARS } from "./session-title.js";
import type { TranscriptEntry } from "./types.js";

describe("cleanTitle", () => {
  it.each([
    ["Trip to Lisbon", "Trip to Lisbon"],
    ['"Trip to Lisbon."', "Trip to Lisbon"],
    ["Title: Trip to Lisbon", "Trip to Lisbon"],
    ["**Trip to Lisbon**", "Trip to Lisbon"],
    ["\n\n  Trip   to Lisbon \nbecause you asked", "Trip to Lisbon"],
    ["« Voyage à Lisbonne »", "Voyage à Lisbonne"],
    ["", undefined],
    ['  \n "" ', undefined],
  ])("%j → %j", (raw, title) => {
    expect(cleanTitle(raw)).toBe(title);
  });

  it("cuts a long answer at a word within the limit", () => {
    const title = cleanTitle("word ".repeat(40)) ?? "";
    expect(title.length).toBeLessThanOrEqual(TITLE_MAX_CHARS);
    expect(title.endsWith("word")).toBe(true);
  });
});

describe("firstExchange", () => {
  const msg = (
    role: "user" | "assistant",
    content: string,
    final = false,
    tools = false,
  ): TranscriptEntry => ({
    type: "message",
    id: Math.random().toString(36),
    ts: "2026-01-01T00:00:00Z",
    message: {
      role,
      content,
      ...(tools
        ? { tool_calls: [{ id: "c", type: "function", function: { name: "t", arguments: "{}" } }] }
        : {}),
    },
    ...(final ? { meta: { final: true } } : {}),
  });

  it("is the first person's message and the first final answer after it", () => {
    const entries = [
      msg("user", "plan my trip"),
      msg("assistant", "", false, true),
      msg("assistant", "Here is a plan", true),
      msg("user", "thanks"),
      msg("assistant", "welcome", true),
    ];
    expect(firstExchange(entries)).toEqual({ user: "plan my trip", reply: "Here is a plan" });
  });

  it("is undefined before the first final answer", () => {
    expect(firstExchange([msg("user", "hello"), msg("assistant", "", false, true)])).toBeUndefined();
    expect(firstExchange([])).toBeUndefined();
  });
});
