import { describe, expect, it } from "vitest";
import { describeLlmFailure, type LlmFailure, oneLine, systemErrorCode } from "./llm-errors.js";

const baseUrl = "http://127.0.0.1:11434/v1";

describe("describeLlmFailure", () => {
  const cases: [string, LlmFailure, string][] = [
    [
      "refused",
      { kind: "connection", code: "ECONNREFUSED", message: "connect ECONNREFUSED" },
      `model endpoint ${baseUrl} refused the connection: is the server running?`,
    ],
    [
      "dns",
      { kind: "connection", code: "ENOTFOUND", message: "getaddrinfo ENOTFOUND" },
      `model endpoint ${baseUrl}: host not found; check inbound.reply.agent.baseUrl or OPENAI_BASE_URL`,
    ],
    [
      "other connection error",
      { kind: "connection", code: "ECONNRESET", message: "socket hang up" },
      `could not reach model endpoint ${baseUrl} (ECONNRESET: socket hang up): is the server up and the URL right?`,
    ],
    [
      "unauthorized",
      { kind: "status", status: 401, message: "bad key" },
      `model endpoint ${baseUrl} said 401: check inbound.reply.agent.apiKey or OPENAI_API_KEY (bad key)`,
    ],
    [
      "ollama model missing",
      { kind: "status", status: 404, message: 'model "llama9" not found, try pulling it first' },
      `model 'llama9' not found at ${baseUrl}: check inbound.reply.agent.model (the server said: model "llama9" not found, try pulling it first)`,
    ],
    [
      "wrong path",
      { kind: "status", status: 404, message: "<html>\n<body>Not Found</body></html>" },
      `model endpoint ${baseUrl} said 404 (<html> <body>Not Found</body></html>): check inbound.reply.agent.baseUrl; OpenAI-compatible servers usually answer under /v1`,
    ],
    [
      "rate limit",
      { kind: "status", status: 429, message: "slow down" },
      `model endpoint ${baseUrl} said 429, rate limited or out of quota: slow down`,
    ],
    [
      "server error",
      { kind: "status", status: 503, message: "loading model" },
      `model endpoint ${baseUrl} failed with 503: loading model`,
    ],
    [
      "bad request",
      { kind: "status", status: 400, message: "context too long" },
      `model endpoint ${baseUrl} rejected the request (400): context too long`,
    ],
    [
      "error event in the stream",
      { kind: "status", status: undefined, message: "overloaded" },
      `model endpoint ${baseUrl} reported an error: overloaded`,
    ],
    ["anything else", { kind: "other", message: "weird" }, `model endpoint ${baseUrl} failed: weird`],
  ];
  it.each(cases)("%s", (_name, failure, expected) => {
    expect(describeLlmFailure(failure, { baseUrl, model: "llama9" })).toBe(expected);
  });

  it("says cut off when output had already arrived", () => {
    const reset: LlmFailure = { kind: "connection", code: "UND_ERR_SOCKET", message: "other side closed" };
    expect(describeLlmFailure(reset, { baseUrl, midStream: true })).toBe(
      `the model's answer was cut off: the connection to model endpoint ${baseUrl} was lost (UND_ERR_SOCKET: other side closed)`,
    );
    expect(describeLlmFailure({ kind: "other", message: "terminated" }, { baseUrl, midStream: true })).toBe(
      "the model's answer was cut off: terminated",
    );
  });
});

describe("helpers", () => {
  it("oneLine flattens and shortens", () => {
    expect(oneLine("a\n\n  b\tc")).toBe("a b c");
    expect(oneLine("x".repeat(500), 10)).toBe(`${"x".repeat(9)}…`);
  });

  it("systemErrorCode walks the cause chain", () => {
    const inner = Object.assign(new Error("connect ECONNREFUSED 127.0.0.1:1"), { code: "ECONNREFUSED" });
    const outer = new TypeError("fetch failed", { cause: inner });
    expect(systemErrorCode(new Error("wrapper", { cause: outer }))).toBe("ECONNREFUSED");
    expect(systemErrorCode(new Error("plain"))).toBeUndefined();
  });
});
