import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import OpenAI from "openai";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { type FakeOpenAI, startFakeOpenAI } from "../../test/fakes/openai-server.js";
import { agentSchema } from "../core/config-schema.js";
import type { ToolDefinition } from "../plugin-api/types.js";
import type { StoredChatMessage } from "../sessions/types.js";
import { outputLimitField } from "./endpoint.js";
import { createHttpFetch } from "./http-fetch.js";
import {
  abortableSleep,
  createLlmClient,
  DEFAULT_BASE_URL,
  type LlmClient,
  NO_API_KEY,
  resolveEndpoint,
} from "./llm-client.js";

const user = (text: string): StoredChatMessage => ({ role: "user", content: text });

describe("resolveEndpoint", () => {
  it("prefers the config, then the env, then OpenAI", () => {
    const configured = agentSchema.parse({
      baseUrl: "http://127.0.0.1:11434/v1/",
      apiKey: "k1",
      model: "llama3",
    });
    expect(resolveEndpoint(configured, { OPENAI_BASE_URL: "http://x/v1", OPENAI_API_KEY: "k2" })).toEqual({
      baseUrl: "http://127.0.0.1:11434/v1",
      apiKey: "k1",
      model: "llama3",
    });
    const bare = agentSchema.parse({});
    expect(resolveEndpoint(bare, { OPENAI_BASE_URL: "http://x:1/v1", OPENAI_API_KEY: "k2" })).toEqual({
      baseUrl: "http://x:1/v1",
      apiKey: "k2",
    });
    expect(resolveEndpoint(bare, { OPENAI_BASE_URL: "", OPENAI_API_KEY: " " })).toEqual({
      baseUrl: DEFAULT_BASE_URL,
      apiKey: NO_API_KEY,
    });
  });
});

describe("createLlmClient against the fake server", () => {
  let fake: FakeOpenAI;
  let client: LlmClient;

  beforeEach(async () => {
    fake = await startFakeOpenAI();
    client = createLlmClient({ baseUrl: fake.url, apiKey: "sk-test", maxRetries: 0 });
  });
  afterEach(async () => {
    await fake.close();
  });

  it("streams text deltas in order and reports usage from the empty-choices chunk", async () => {
    fake.enqueue({
      text: "Hello there, world",
      chunks: 3,
      usage: { prompt_tokens: 11, completion_tokens: 5, total_tokens: 16 },
    });
    const deltas: string[] = [];
    let firstTokens = 0;
    let progress = 0;
    const result = await client.stream({
      model: "fake-model",
      messages: [{ role: "system", content: "be brief" }, user("hi")],
      maxOutputTokens: 256,
      signal: new AbortController().signal,
      onDelta: (text) => deltas.push(text),
      onFirstToken: () => firstTokens++,
      onProgress: () => progress++,
    });
    expect(result).toEqual({
      ok: true,
      text: "Hello there, world",
      toolCalls: [],
      finishReason: "stop",
      usage: { promptTokens: 11, completionTokens: 5, totalTokens: 16 },
      model: "fake-model",
    });
    expect(deltas).toEqual(["Hello ", "there,", " world"]);
    expect(firstTokens).toBe(1);
    // role chunk + 3 deltas + finish chunk + usage chunk
    expect(progress).toBe(6);
    const body = fake.requests[0]!.body;
    expect(body.stream).toBe(true);
    expect(body.stream_options).toEqual({ include_usage: true });
    expect(body.max_tokens).toBe(256);
    expect(body.tools).toBeUndefined();
    expect(body.messages).toEqual([
      { role: "system", content: "be brief" },
      { role: "user", content: "hi" },
    ]);
    expect(fake.requests[0]!.headers.authorization).toBe("Bearer sk-test");
    expect(fake.requests[0]!.headers["content-type"]).toBe("application/json");
  });

  it("sends the whole context again on the next call with the same message objects and a new one", async () => {
    fake.enqueue({ text: "one" });
    fake.enqueue({ text: "two" });
    const messages: StoredChatMessage[] = [{ role: "system", content: "be brief" }, user("héllo 👋")];
    await client.stream({ model: "m", messages, signal: new AbortController().signal });
    messages.push({ role: "assistant", content: "one" }, user("again"));
    await client.stream({ model: "m", messages, signal: new AbortController().signal });
    expect(fake.requests[1]!.body.messages).toEqual([
      { role: "system", content: "be brief" },
      { role: "user", content: "héllo 👋" },
      { role: "assistant", content: "one" },
      { role: "user", content: "again" },
    ]);
  });

  it("leaves usage undefined when the provider sends none", async () => {
    fake.enqueue({ text: "ok", usage: null });
    const result = await client.stream({
      model: "m",
      messages: [user("x")],
      signal: new AbortController().signal,
    });
    expect(result.ok).toBe(true);
    expect(result.ok && result.usage).toBeUndefined();
    expect(result.ok && result.text).toBe("ok");
  });

  it("assembles tool calls split over fragments and sends tools as functions", async () => {
    fake.enqueue({
      text: "Let me look.",
      toolCalls: [
        { name: "read_file", arguments: { path: "notes/todo.md", limit: 20 }, id: "call_a" },
        { name: "bash", arguments: '{"command":"ls -la /tmp"}' },
      ],
    });
    const tool: ToolDefinition = {
      name: "read_file",
      description: "Read a file",
      parameters: { type: "object", properties: { path: { type: "string" } }, required: ["path"] },
      execute: async () => ({ ok: true, output: "" }),
    };
    const firstTokens: number[] = [];
    const result = await client.stream({
      model: "m",
      messages: [user("what is in my todo?")],
      tools: [tool],
      signal: new AbortController().signal,
      onFirstToken: () => firstTokens.push(1),
    });
    if (!result.ok) throw new Error(result.error);
    expect(result.finishReason).toBe("tool_calls");
    expect(result.text).toBe("Let me look.");
    expect(result.toolCalls).toHaveLength(2);
    expect(result.toolCalls[0]).toEqual({
      id: "call_a",
      type: "function",
      function: { name: "read_file", arguments: '{"path":"notes/todo.md","limit":20}' },
    });
    expect(result.toolCalls[1]!.function).toEqual({ name: "bash", arguments: '{"command":"ls -la /tmp"}' });
    expect(result.toolCalls[1]!.id).toMatch(/^call_/);
    expect(firstTokens).toHaveLength(1);
    expect(fake.requests[0]!.body.tools).toEqual([
      {
        type: "function",
        function: { name: "read_file", description: "Read a file", parameters: tool.parameters },
      },
    ]);
  });

  it("sends a tool exchange back in OpenAI's shape", async () => {
    const history: StoredChatMessage[] = [
      user("list"),
      {
        role: "assistant",
        content: null,
        tool_calls: [
          { id: "call_1", type: "function", function: { name: "bash", arguments: '{"command":"ls"}' } },
        ],
      },
      { role: "tool", content: "a.txt", tool_call_id: "call_1" },
    ];
    const result = await client.stream({
      model: "m",
      messages: history,
      signal: new AbortController().signal,
    });
    expect(result.ok).toBe(true);
    expect(fake.requests[0]!.body.messages).toEqual([
      { role: "user", content: "list" },
      {
        role: "assistant",
        content: null,
        tool_calls: [
          { id: "call_1", type: "function", function: { name: "bash", arguments: '{"command":"ls"}' } },
        ],
      },
      { role: "tool", content: "a.txt", tool_call_id: "call_1" },
    ]);
  });

  it("fails with output-limit when the answer stops at the length limit, keeping the partial text", async () => {
    fake.enqueue({ text: "This answer is cut of", finishReason: "length" });
    const result = await client.stream({
      model: "m",
      messages: [user("long please")],
      maxOutputTokens: 5,
      signal: new AbortController().signal,
    });
    expect(result).toEqual({
      ok: false,
      reason: "output-limit",
      error: "the model's answer hit the output limit (maxOutputTokens 5) and was cut off",
      partialText: "This answer is cut of",
    });
  });

  it("treats a stream without a finish reason as cut off", async () => {
    fake.enqueue({ text: "half an ans", finishReason: null });
    const result = await client.stream({
      model: "m",
      messages: [user("x")],
      signal: new AbortController().signal,
    });
    expect(result.ok).toBe(false);
    expect(!result.ok && result.reason).toBe("error");
    expect(!result.ok && result.error).toContain("cut off");
    expect(!result.ok && result.partialText).toBe("half an ans");
  });

  it("reports a connection that dies mid-answer as cut off", async () => {
    fake.enqueue({ text: "abc", destroy: "after-first-chunk" });
    const result = await client.stream({
      model: "m",
      messages: [user("x")],
      signal: new AbortController().signal,
    });
    expect(result.ok).toBe(false);
    expect(!result.ok && result.reason).toBe("error");
    expect(!result.ok && result.error).toMatch(/^the model's answer was cut off/);
  });

  it("fails with the server's words when the stream carries an error event", async () => {
    fake.enqueue({ text: "never shown", streamError: "the GPU caught fire mid-answer" });
    const result = await client.stream({
      model: "m",
      messages: [user("x")],
      signal: new AbortController().signal,
    });
    expect(result.ok).toBe(false);
    expect(!result.ok && result.reason).toBe("error");
    expect(!result.ok && result.error).toContain("the GPU caught fire mid-answer");
  });

  it("reads events whatever the server's line ends, and ignores what follows [DONE]", async () => {
    const server = createServer((_req, res) => {
      res.writeHead(200, { "content-type": "text/event-stream" });
      const chunk = (delta: object, finish: string | null = null) =>
        `data: ${JSON.stringify({ id: "c", object: "chat.completion.chunk", created: 1, model: "m", choices: [{ index: 0, delta, finish_reason: finish }] })}`;
      res.end(
        `: ping\r\n\r\n${chunk({ role: "assistant", content: "he" })}\r\n\r\n${chunk({ content: "y" })}\r\r` +
          `${chunk({}, "stop")}\n\ndata: [DONE]\n\n${chunk({ content: " after done" })}\n\n`,
      );
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    const local = createLlmClient({
      baseUrl: `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`,
      apiKey: "k",
      maxRetries: 0,
    });
    try {
      const result = await local.stream({
        model: "m",
        messages: [user("x")],
        signal: new AbortController().signal,
      });
      expect(result).toMatchObject({ ok: true, text: "hey", finishReason: "stop" });
    } finally {
      await new Promise((resolve) => server.close(resolve));
    }
  });

  it("aborts a request hanging before the headers, and the request goes away on the server", async () => {
    fake.enqueue({ text: "never", hang: "before-headers" });
    const controller = new AbortController();
    const pending = client.stream({ model: "m", messages: [user("x")], signal: controller.signal });
    await fake.waitForRequest(1);
    controller.abort();
    const result = await pending;
    expect(result).toMatchObject({ ok: false, reason: "aborted", partialText: "" });
    const request = await fake.waitForAbort(1);
    expect(request.n).toBe(1);
  });

  it("aborts a request hanging after the first chunk (the SDK loop ends without throwing)", async () => {
    fake.enqueue({ text: "partial reply here", chunks: 1, hang: "after-first-chunk" });
    const controller = new AbortController();
    const result = await client.stream({
      model: "m",
      messages: [user("x")],
      signal: controller.signal,
      // The first chunk (the role) has arrived: the headers are in, the stream is open.
      onProgress: () => controller.abort(),
    });
    expect(result).toMatchObject({ ok: false, reason: "aborted" });
    await fake.waitForAbort(1);
  });

  it("returns aborted at once for an already aborted signal, without a request", async () => {
    const controller = new AbortController();
    controller.abort();
    const result = await client.stream({ model: "m", messages: [user("x")], signal: controller.signal });
    expect(result).toMatchObject({ ok: false, reason: "aborted" });
    expect(fake.requests).toHaveLength(0);
  });

  it("turns HTTP errors into one actionable line", async () => {
    fake.enqueue(
      { status: 500, errorMessage: "the GPU caught fire" },
      { status: 401, errorMessage: "Incorrect API key provided" },
      { status: 404, errorMessage: "The model 'gpt-9' does not exist", errorCode: "model_not_found" },
    );
    const call = () =>
      client.stream({ model: "gpt-9", messages: [user("x")], signal: new AbortController().signal });
    const r500 = await call();
    expect(r500).toEqual({
      ok: false,
      reason: "error",
      error: `model endpoint ${fake.url} failed with 500: the GPU caught fire`,
      partialText: "",
    });
    const r401 = await call();
    expect(!r401.ok && r401.error).toBe(
      `model endpoint ${fake.url} said 401: check inbound.reply.agent.apiKey or OPENAI_API_KEY (Incorrect API key provided)`,
    );
    const r404 = await call();
    expect(!r404.ok && r404.error).toMatch(new RegExp(`^model 'gpt-9' not found at ${fake.url}`));
  });

  it("a callback that throws is a bug: it is rethrown, not reported as a model failure", async () => {
    fake.enqueue({ text: "boom" });
    const pending = client.stream({
      model: "m",
      messages: [user("x")],
      signal: new AbortController().signal,
      onDelta: () => {
        throw new Error("bug in caller");
      },
    });
    await expect(pending).rejects.toThrow("bug in caller");
  });

  it("a callback that throws ends the request: it goes away on the server", async () => {
    fake.enqueue({ text: "boom and more", hang: "after-first-output" });
    const pending = client.stream({
      model: "m",
      messages: [user("x")],
      signal: new AbortController().signal,
      onDelta: () => {
        throw new Error("bug in caller");
      },
    });
    await expect(pending).rejects.toThrow("bug in caller");
    await fake.waitForAbort(1);
  });

  it("lists models for the reachability check", async () => {
    fake.models = ["llama3", "qwen2.5"];
    expect(await client.listModels(new AbortController().signal)).toEqual({
      ok: true,
      models: ["llama3", "qwen2.5"],
    });
  });

  it("passes the reasoning effort through only when set", async () => {
    await client.stream({
      model: "m",
      messages: [user("x")],
      reasoningEffort: "low",
      signal: new AbortController().signal,
    });
    await client.stream({ model: "m", messages: [user("y")], signal: new AbortController().signal });
    expect(fake.requests[0]!.body.reasoning_effort).toBe("low");
    expect(fake.requests[1]!).toBeDefined();
    expect("reasoning_effort" in fake.requests[1]!.body).toBe(false);
    expect("max_tokens" in fake.requests[1]!.body).toBe(false);
  });
});

describe("the chat request: what the SDK would send, and its retries", () => {
  let fake: FakeOpenAI;
  let waits: number[];
  const retrying = (maxRetries = 2) =>
    createLlmClient({
      baseUrl: fake.url,
      apiKey: "sk-test",
      maxRetries,
      sleep: async (ms) => {
        waits.push(ms);
      },
    });
  /** A client whose wait before a retry is a real abortable timer; `inWait` resolves once it waits. */
  const waitingClient = () => {
    let waiting!: () => void;
    const inWait = new Promise<void>((resolve) => {
      waiting = resolve;
    });
    const client = createLlmClient({
      baseUrl: fake.url,
      apiKey: "sk-test",
      maxRetries: 2,
      sleep: (ms, signal) => {
        waits.push(ms);
        waiting();
        return abortableSleep(ms, signal);
      },
    });
    return { client, inWait };
  };
  const call = (client: LlmClient, signal = new AbortController().signal) =>
    client.stream({ model: "m", messages: [user("x")], signal });

  beforeEach(async () => {
    fake = await startFakeOpenAI();
    waits = [];
  });
  afterEach(async () => {
    await fake.close();
  });

  it("sends the path, headers and body the SDK's own create() sends", async () => {
    const sdkClient = new OpenAI({
      baseURL: fake.url,
      apiKey: "sk-test",
      maxRetries: 0,
      timeout: 24 * 60 * 60 * 1000,
      fetch: createHttpFetch(),
    });
    fake.enqueue({ text: "one" }, { text: "two" });
    const stream = await sdkClient.chat.completions.create({
      model: "m",
      messages: [{ role: "user", content: "x" }],
      max_tokens: 64,
      stream: true,
      stream_options: { include_usage: true },
    });
    for await (const _chunk of stream);
    const ours = await createLlmClient({ baseUrl: fake.url, apiKey: "sk-test", maxRetries: 0 }).stream({
      model: "m",
      messages: [{ role: "user", content: "x" }],
      maxOutputTokens: 64,
      signal: new AbortController().signal,
    });
    expect(ours.ok).toBe(true);
    const [theirs, mine] = fake.requests;
    expect(mine!.method).toBe(theirs!.method);
    expect(mine!.path).toBe(theirs!.path);
    expect(mine!.headers).toEqual(theirs!.headers);
    expect(mine!.headers["user-agent"]).toMatch(/^OpenAI\/JS /);
    expect(mine!.headers["x-stainless-retry-count"]).toBe("0");
    expect(mine!.body).toEqual(theirs!.body);
  });

  it("tries a rate limit again after the server's retry-after-ms, counting the retry in its header", async () => {
    fake.enqueue({ status: 429, errorHeaders: { "retry-after-ms": "1500" } }, { text: "through" });
    const result = await call(retrying());
    expect(result).toMatchObject({ ok: true, text: "through" });
    expect(waits).toEqual([1500]);
    expect(fake.requests.map((r) => r.headers["x-stainless-retry-count"])).toEqual(["0", "1"]);
  });

  it("gives up on a 5xx after maxRetries retries with the SDK's backoff, with the last answer's words", async () => {
    fake.enqueue({ status: 500 }, { status: 502 }, { status: 503, errorMessage: "overloaded" });
    const result = await call(retrying(2));
    expect(result).toEqual({
      ok: false,
      reason: "error",
      error: `model endpoint ${fake.url} failed with 503: overloaded`,
      partialText: "",
    });
    expect(fake.requests).toHaveLength(3);
    expect(waits).toHaveLength(2);
    expect(waits[0]).toBeGreaterThan(375 - 1e-9);
    expect(waits[0]).toBeLessThanOrEqual(500);
    expect(waits[1]).toBeGreaterThan(750 - 1e-9);
    expect(waits[1]).toBeLessThanOrEqual(1000);
  });

  it("does not try again what the server says not to, or a request it rejected", async () => {
    fake.enqueue(
      { status: 503, errorHeaders: { "x-should-retry": "false" } },
      { status: 400, errorMessage: "bad request" },
      { status: 400, errorHeaders: { "x-should-retry": "true" } },
      { text: "ok" },
    );
    const client = retrying();
    expect(await call(client)).toMatchObject({ ok: false, error: expect.stringContaining("503") });
    expect(await call(client)).toMatchObject({ ok: false, error: expect.stringContaining("bad request") });
    expect(fake.requests).toHaveLength(2);
    expect(waits).toEqual([]);
    expect(await call(client)).toMatchObject({ ok: true, text: "ok" });
    expect(fake.requests).toHaveLength(4);
    expect(waits).toHaveLength(1);
  });

  it("tries a connection that broke before any answer again, and reports it once retries are spent", async () => {
    fake.enqueue({ destroy: "before-headers" }, { text: "second try" });
    expect(await call(retrying())).toMatchObject({ ok: true, text: "second try" });
    expect(waits).toHaveLength(1);
    fake.enqueue({ destroy: "before-headers" });
    const result = await call(retrying(0));
    expect(result).toMatchObject({ ok: false, reason: "error" });
    expect(!result.ok && result.error).toMatch(
      /^could not reach model endpoint \S+ \(ECONNRESET: socket hang up\)/,
    );
    expect(fake.requests).toHaveLength(3);
  });

  it("GET /models is tried again by the same rule: a 5xx after the backoff, a 429 after its retry-after-ms", async () => {
    fake.models = ["m1"];
    fake.modelsFailures = [{ status: 503 }, { status: 429, headers: { "retry-after-ms": "1500" } }];
    expect(await retrying(2).listModels(new AbortController().signal)).toEqual({ ok: true, models: ["m1"] });
    expect(fake.modelRequests).toHaveLength(3);
    expect(waits).toHaveLength(2);
    expect(waits[0]).toBeGreaterThan(375 - 1e-9);
    expect(waits[0]).toBeLessThanOrEqual(500);
    expect(waits[1]).toBe(1500);
  });

  it("GET /models: no retry past maxRetries, none for a 4xx the rule does not retry", async () => {
    fake.modelsFailures = [{ status: 500 }, { status: 500 }];
    expect(await retrying(1).listModels(new AbortController().signal)).toMatchObject({ ok: false });
    expect(fake.modelRequests).toHaveLength(2);
    fake.modelsFailures = [{ status: 404 }];
    expect(await retrying(2).listModels(new AbortController().signal)).toMatchObject({ ok: false });
    expect(fake.modelRequests).toHaveLength(3);
  });

  it("an abort ends the wait before a GET /models retry at once (a gateway stopping does not wait it out)", async () => {
    fake.modelsFailures = [{ status: 429, headers: { "retry-after-ms": "600000" } }];
    const { client, inWait } = waitingClient();
    const controller = new AbortController();
    const pending = client.listModels(controller.signal);
    await inWait;
    controller.abort();
    expect(await pending).toMatchObject({ ok: false });
    expect(waits).toEqual([600000]);
    expect(fake.modelRequests).toHaveLength(1);
  });

  it("an abort ends the wait before a retry at once, however long the server asked for", async () => {
    fake.enqueue({ status: 429, errorHeaders: { "retry-after-ms": "600000" } });
    const { client, inWait } = waitingClient();
    const controller = new AbortController();
    const pending = call(client, controller.signal);
    await inWait;
    controller.abort();
    expect(await pending).toMatchObject({ ok: false, reason: "aborted" });
    expect(waits).toEqual([600000]);
    expect(fake.requests).toHaveLength(1);
  });
});

describe("abortableSleep", () => {
  it("rejects as soon as its signal aborts, and at once for one aborted already", async () => {
    const controller = new AbortController();
    const sleeping = abortableSleep(600_000, controller.signal);
    controller.abort();
    await expect(sleeping).rejects.toMatchObject({ name: "AbortError" });
    await expect(abortableSleep(600_000, controller.signal)).rejects.toMatchObject({ name: "AbortError" });
    await expect(abortableSleep(0, new AbortController().signal)).resolves.toBeUndefined();
  });
});

describe("outputLimitField", () => {
  it("uses max_completion_tokens for OpenAI's own API and max_tokens elsewhere", () => {
    expect(outputLimitField("https://api.openai.com/v1")).toBe("max_completion_tokens");
    expect(outputLimitField("http://127.0.0.1:11434/v1")).toBe("max_tokens");
    expect(outputLimitField("not a url")).toBe("max_tokens");
  });
});

describe("createLlmClient without a server", () => {
  it("says the connection was refused and names the URL", async () => {
    // Take a free port, then close it so nothing listens there.
    const server = createServer();
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    const { port } = server.address() as AddressInfo;
    await new Promise<void>((resolve) => server.close(() => resolve()));
    const baseUrl = `http://127.0.0.1:${port}/v1`;
    const client = createLlmClient({ baseUrl, apiKey: NO_API_KEY, maxRetries: 0 });
    const result = await client.stream({
      model: "m",
      messages: [user("x")],
      signal: new AbortController().signal,
    });
    expect(result).toEqual({
      ok: false,
      reason: "error",
      error: `model endpoint ${baseUrl} refused the connection: is the server running?`,
      partialText: "",
    });
    const models = await client.listModels(new AbortController().signal);
    expect(models).toEqual({
      ok: false,
      error: `model endpoint ${baseUrl} refused the connection: is the server running?`,
    });
  });
});

describe("preloadModelSdk", () => {
  it("loads the SDK and Node's own fetch (undici), which the SDK's first request would load on the event loop", async () => {
    // A fresh process on the built module (npm test builds dist/ first): this one may have loaded undici already.
    const { execFileSync } = await import("node:child_process");
    const { fileURLToPath, pathToFileURL } = await import("node:url");
    const built = fileURLToPath(new URL("../../dist/src/agent/llm-client.js", import.meta.url));
    const script = `
      const loaded = () => process.moduleLoadList.some((m) => m.includes("internal/deps/undici/undici"));
      const before = loaded();
      const { preloadModelSdk } = await import(${JSON.stringify(pathToFileURL(built).href)});
      await preloadModelSdk();
      console.log(JSON.stringify({ before, after: loaded() }));`;
    const out = execFileSync(process.execPath, ["--input-type=module", "-e", script], { encoding: "utf8" });
    expect(JSON.parse(out)).toEqual({ before: false, after: true });
  });
});
