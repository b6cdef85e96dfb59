import { describe, expect, it } from "vitest";
import { TELEGRAM_SECTION, telegramConfigSection, telegramToken } from "./config.js";
import { telegramSchema } from "./config-schema.js";

describe("the telegram section", () => {
  it("defaults when left out", () => {
    expect(telegramSchema.parse(undefined)).toEqual({
      allowFrom: [],
      requireMention: true,
      apiRoot: "https://api.telegram.org",
      webhookPath: "/telegram/webhook",
      mediaMaxMb: 20,
      mediaTimeoutSeconds: 120,
    });
  });

  it("takes user ids, @usernames, group ids and *; refuses anything else", () => {
    expect(telegramSchema.parse({ allowFrom: [7, "8", "@alice_b", "-100", "*"] }).allowFrom).toHaveLength(5);
    expect(telegramSchema.safeParse({ allowFrom: ["alice"] }).success).toBe(false);
    expect(telegramSchema.safeParse({ allowFrom: ["@a-b"] }).success).toBe(false);
  });

  it("a webhook URL needs its secret", () => {
    const result = telegramSchema.safeParse({ webhookUrl: "https://x.org/tg" });
    expect(result.success).toBe(false);
    expect(JSON.stringify(result.error?.issues)).toContain("webhookSecret");
    expect(
      telegramSchema.safeParse({ webhookUrl: "https://x.org/tg", webhookSecret: "abc_DEF-1" }).success,
    ).toBe(true);
  });

  it("a webhook URL must be https:// (Telegram posts nowhere else); the issue names the key", () => {
    for (const webhookUrl of [
      "http://bot.example.org/tg",
      "ftp://bot.example.org/tg",
      "bot.example.org/tg",
    ]) {
      const result = telegramSchema.safeParse({ webhookUrl, webhookSecret: "abc" });
      expect(result.success, webhookUrl).toBe(false);
      expect(result.error?.issues.map((issue) => issue.path)).toEqual([["webhookUrl"]]);
      expect(result.error?.issues[0]?.message).toContain("https://");
    }
  });

  it("asks for the transport when a token is set, in the file or the environment it was given", () => {
    const section = telegramConfigSection({ TELEGRAM_BOT_TOKEN: "1:env" });
    expect(section).toBe(TELEGRAM_SECTION);
    const config = telegramSchema.parse({});
    expect(section.enabled?.(config)).toBe(true);
    expect(telegramToken(config, { TELEGRAM_BOT_TOKEN: "1:env" })).toBe("1:env");
    expect(telegramToken({ ...config, botToken: "1:file" }, { TELEGRAM_BOT_TOKEN: "1:env" })).toBe("1:file");
    expect(telegramConfigSection({ TELEGRAM_BOT_TOKEN: "" }).enabled?.(config)).toBe(false);
  });
});
