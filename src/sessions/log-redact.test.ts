import { describe, expect, it } from "vitest";
import {
  LONG_STRING,
  maskSecrets,
  redactString,
  redactToolArguments,
  SECRET_MASK,
  secretValues,
  TOKEN_MASK,
} from "./log-redact.js";

const SECRET = "planted-Secret-value";

describe("maskSecrets", () => {
  it.each([
    ["a known secret, wherever it is", `curl -H x:${SECRET}/y`, `curl -H x:${SECRET_MASK}/y`],
    ["every occurrence of it", `${SECRET} ${SECRET}`, `${SECRET_MASK} ${SECRET_MASK}`],
    ["an OpenAI-style key", "key sk-abcdefghijklmnopqrstuv", `key ${TOKEN_MASK}`],
    ["a GitHub token", "ghp_abcdefghijklmnopqrstuvwxyz0123", TOKEN_MASK],
    ["a Slack token", "xoxb-1234567890-abcdef", TOKEN_MASK],
    ["a Telegram bot token", "123456789:AAHdqTcvCH1vGWJxfSeofSAs0K5PALDsaw1", TOKEN_MASK],
    ["an AWS access key id", "AKIAIOSFODNN7EXAMPLE", TOKEN_MASK],
    [
      "a bearer header keeps its name",
      "Authorization: Bearer abc.def-123",
      `Authorization: Bearer ${TOKEN_MASK}`,
    ],
    ["a named password keeps its name", "mysql --password=hunter2x", `mysql --password=${TOKEN_MASK}`],
    [
      "an api_key query parameter",
      "https://x.org/?api_key=1234abcd&q=1",
      `https://x.org/?api_key=${TOKEN_MASK}&q=1`,
    ],
    ["a long run mixing letters and digits", `id ${"a1".repeat(20)}`, `id ${TOKEN_MASK}`],
    ["a long run of letters only is a word, kept", "x".repeat(40), "x".repeat(40)],
    ["an ordinary command, kept", "ls -la /tmp && echo done", "ls -la /tmp && echo done"],
    ["a path, kept", "/home/me/notes/2026-12-06.md", "/home/me/notes/2026-12-06.md"],
  ])("%s", (_name, text, expected) => {
    expect(maskSecrets(text, [SECRET])).toBe(expected);
  });

  it("masks a secret that holds another whole (longest first)", () => {
    expect(maskSecrets("abcdef123456", ["abcdef", "abcdef123456"])).toBe(SECRET_MASK);
  });

  it("leaves secrets shorter than six characters alone (they would mask ordinary words)", () => {
    expect(maskSecrets("the main thing", ["main"])).toBe("the main thing");
  });
});

describe("redactString", () => {
  it("shows a short string as it is (masked)", () => {
    expect(redactString("echo hi", [])).toBe("echo hi");
  });

  it("shows a long string as its length and a short hash", () => {
    const long = "y".repeat(LONG_STRING + 1);
    expect(redactString(long, [])).toMatch(new RegExp(`^<${LONG_STRING + 1} chars #[0-9a-f]{8}>$`));
  });

  it("gives equal strings the same hash and different strings different ones", () => {
    const a = "a ".repeat(60);
    expect(redactString(a, [])).toBe(redactString(a, []));
    expect(redactString(a, [])).not.toBe(redactString(`${a}b`, []));
  });

  it("hashes the masked text: two long strings differing only in their secret hash alike", () => {
    const base = "z ".repeat(50);
    const other = SECRET.replace("p", "P");
    expect(redactString(`${base}${SECRET}`, [SECRET])).toBe(redactString(`${base}${other}`, [other]));
  });
});

describe("redactToolArguments", () => {
  it.each([
    ["a short command is shown, quoted", '{"command":"ls -la"}', '{command: "ls -la"}'],
    ["numbers, booleans and null are shown", '{"n":3,"b":true,"z":null}', "{n: 3, b: true, z: null}"],
    ["a secret in an argument is masked", `{"command":"echo ${SECRET}"}`, `{command: "echo ${SECRET_MASK}"}`],
    ["nested objects and arrays", '{"a":{"b":["x",1]}}', '{a: {b: ["x", 1]}}'],
    [
      "deeper than three levels shows the size",
      '{"a":{"b":{"c":{"d":1}}}}',
      "{a: {b: {c: <object of 1 keys>}}}",
    ],
    ["no arguments", "", "{}"],
  ])("%s", (_name, json, expected) => {
    expect(redactToolArguments(json, [SECRET])).toBe(expected);
  });

  it("shows a long value as its length and hash, never its text", () => {
    const content = `${"line of a file\n".repeat(20)}${SECRET}`;
    const shown = redactToolArguments(JSON.stringify({ path: "a.txt", content }), [SECRET]);
    expect(shown).toMatch(/^\{path: "a\.txt", content: <\d+ chars #[0-9a-f]{8}>\}$/);
    expect(shown).not.toContain("line of a file");
  });

  it("text that is not JSON is redacted as one string", () => {
    expect(redactToolArguments(`{"command": "echo ${SECRET}`, [SECRET])).toBe(
      `{"command": "echo ${SECRET_MASK}`,
    );
  });

  it("shows at most ten keys", () => {
    const many = Object.fromEntries(Array.from({ length: 12 }, (_, i) => [`k${i}`, i]));
    expect(redactToolArguments(JSON.stringify(many), [])).toMatch(/k9: 9, …2 more\}$/);
  });
});

describe("secretValues", () => {
  it("finds the config's secret-named strings, the extra ones and the environment's *_KEY/*_TOKEN/*_SECRET", () => {
    const config = {
      telegram: { botToken: "123:telegram-token", allowFrom: ["12345678"] },
      inbound: {
        reply: { agent: { apiKey: "sk-config-key", model: "gpt-4o-mini" }, session: { mainKey: "primary" } },
      },
      webhooks: { sources: [{ name: "ci", secret: "hook-secret-1" }] },
    };
    const env = {
      OPENAI_API_KEY: "env-api-key",
      GITHUB_TOKEN: "env-gh-token",
      APP_SECRET: "env-app-secret",
      HOME: "/home/someone",
      SHORT_TOKEN: "abc",
    };
    expect(secretValues(config, env, ["gateway-token-1"]).sort()).toEqual(
      [
        "123:telegram-token",
        "sk-config-key",
        "hook-secret-1",
        "gateway-token-1",
        "env-api-key",
        "env-gh-token",
        "env-app-secret",
      ].sort(),
    );
  });
});
