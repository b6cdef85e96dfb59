import { describe, expect, it } from "vitest";
import { undeliverableLine } from "./outbox-status.js";

const refused = (chatId: string, at: number) => ({
  channel: "telegram",
  chatId,
  kind: "reply" as const,
  reason: `Telegram says 403: Forbidden: bot was blocked by the user (sending to chat ${chatId})`,
  at,
});

describe("undeliverableLine", () => {
  it("is absent when nothing was given up", () => {
    expect(undeliverableLine([], 0)).toBeUndefined();
  });

  it("names the chat, how long ago and why, newest first, at most three", () => {
    const now = 10 * 60_000;
    expect(undeliverableLine([refused("42", now - 5 * 60_000)], now)).toBe(
      "Not delivered: 1 reply refused by the chat — telegram chat 42, 5m ago: Telegram says 403: Forbidden: bot was blocked by the user (sending to chat 42)",
    );
    const line =
      undeliverableLine(
        [1, 2, 3, 4, 5].map((n) => refused(String(n), n * 1000)),
        now,
      ) ?? "";
    expect(line).toMatch(
      /^Not delivered: 5 replies refused by the chat — telegram chat 5, 9m ago: .*; telegram chat 4,/,
    );
    expect(line).toMatch(/telegram chat 3, .* \(and 2 more\)$/);
    expect(line).not.toContain("telegram chat 2,");
  });
});
