import { afterEach, beforeEach, describe, expect, it } from "vitest";
import {
  type ChatRequestBody,
  type FakeOpenAI,
  markerReply,
  splitInto,
  startFakeOpenAI,
} from "./openai-server.js";

type Chunk = {
  choices: {
    delta: {
      role?: string;
      content?: string;
      tool_calls?: {
        index: number;
        id?: string;
        type?: string;
        function: { name?: string; arguments?: string };
      }[];
    };
    finish_reason: string | null;
  }[];
  usage?: { prompt_tokens: number; completion_tokens: number; total_tokens: number };
};

/** The raw SSE events of a response: parsed JSON chunks, and whether `[DONE]` closed the stream. */
async function readSse(response: Response): Promise<{ chunks: Chunk[]; done: boolean }> {
  const text = await response.text();
  const events = text.split("\n\n").filter((part) => part.length > 0);
  for (const event of events) expect(event.startsWith("data: ")).toBe(true);
  const payloads = events.map((event) => event.slice("data: ".length));
  const done = payloads.at(-1) === "[DONE]";
  return { chunks: payloads.filter((p) => p !== "[DONE]").map((p) => JSON.parse(p) as Chunk), done };
}

function post(fake: FakeOpenAI, body: unknown, signal?: AbortSignal): Promise<Response> {
  return fetch(`${fake.url}/chat/completions`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify(body),
    ...(signal ? { signal } : {}),
  });
}

const userSays = (text: string) => ({ model: "m", messages: [{ role: "user", content: text }] });

describe("startFakeOpenAI", () => {
  let fake: FakeOpenAI;
  beforeEach(async () => {
    fake = await startFakeOpenAI();
  });
  afterEach(async () => {
    await fake.close();
  });

  it("listens on 127.0.0.1 under /v1 and lists models", async () => {
    expect(fake.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/v1$/);
    fake.models = ["a", "b"];
    const body = (await (await fetch(`${fake.url}/models`)).json()) as {
      object: string;
      data: { id: string }[];
    };
    expect(body.object).toBe("list");
    expect(body.data.map((m) => m.id)).toEqual(["a", "b"]);
  });

  it("with apiKey set, answers 401 to a request without that bearer key, and normally with it", async () => {
    fake.apiKey = "sk-right";
    expect((await fetch(`${fake.url}/models`)).status).toBe(401);
    const wrong = await fetch(`${fake.url}/models`, { headers: { authorization: "Bearer sk-wrong" } });
    expect(wrong.status).toBe(401);
    expect(((await wrong.json()) as { error: { code: string } }).error.code).toBe("invalid_api_key");
    const right = await fetch(`${fake.url}/models`, { headers: { authorization: "Bearer sk-right" } });
    expect(right.status).toBe(200);
  });

  it("records model-list requests apart and holds them while hangModels is set", async () => {
    fake.hangModels = true;
    const answer = fetch(`${fake.url}/models`);
    const held = await fake.waitForModelsRequest(1);
    expect(held.n).toBe(1);
    expect(held.answered()).toBe(false);
    // A chat hang's release does not answer a held model list.
    fake.release();
    const chat = await post(fake, userSays("still served"));
    expect(chat.status).toBe(200);
    expect(held.answered()).toBe(false);
    expect(fake.requests).toHaveLength(1);
    fake.releaseModels();
    const body = (await (await answer).json()) as { data: { id: string }[] };
    expect(body.data.map((m) => m.id)).toEqual(["fake-model"]);
    expect(await held.closed).toBe("finished");
    expect(held.answered()).toBe(true);
    // Released: later requests are answered at once again.
    expect((await fetch(`${fake.url}/models`)).status).toBe(200);
    expect(fake.modelRequests.map((r) => r.n)).toEqual([1, 2]);
  });

  it("sees a held model-list request whose client went away", async () => {
    fake.hangModels = true;
    const controller = new AbortController();
    const answer = fetch(`${fake.url}/models`, { signal: controller.signal });
    const held = await fake.waitForModelsRequest(1);
    controller.abort();
    await expect(answer).rejects.toThrow();
    expect(await held.closed).toBe("aborted");
    expect(held.answered()).toBe(false);
  });

  it("echoes the last user message by default, as plain JSON without stream", async () => {
    const response = await post(fake, userSays("hello"));
    const body = (await response.json()) as {
      object: string;
      choices: { message: { content: string }; finish_reason: string }[];
      usage: { prompt_tokens: number };
    };
    expect(body.object).toBe("chat.completion");
    expect(body.choices[0]?.message.content).toBe("echo: hello");
    expect(body.choices[0]?.finish_reason).toBe("stop");
    expect(body.usage.prompt_tokens).toBeGreaterThan(0);
  });

  it("streams a realistic SSE answer: role, deltas, finish, usage with empty choices, [DONE]", async () => {
    fake.enqueue({
      text: "abcdef",
      chunks: 3,
      usage: { prompt_tokens: 7, completion_tokens: 3, total_tokens: 10 },
    });
    const { chunks, done } = await readSse(
      await post(fake, { ...userSays("x"), stream: true, stream_options: { include_usage: true } }),
    );
    expect(done).toBe(true);
    expect(chunks[0]?.choices[0]?.delta).toEqual({ role: "assistant", content: "" });
    expect(chunks.slice(1, 4).map((c) => c.choices[0]?.delta.content)).toEqual(["ab", "cd", "ef"]);
    expect(chunks[4]?.choices[0]?.finish_reason).toBe("stop");
    expect(chunks[5]).toMatchObject({
      choices: [],
      usage: { prompt_tokens: 7, completion_tokens: 3, total_tokens: 10 },
    });
    expect(chunks).toHaveLength(6);
  });

  it("sends usage only when the request asked for it, and never when the reply says null", async () => {
    fake.enqueue({ text: "a" }, { text: "b", usage: null });
    const without = await readSse(await post(fake, { ...userSays("x"), stream: true }));
    expect(without.chunks.some((c) => c.usage)).toBe(false);
    const suppressed = await readSse(
      await post(fake, { ...userSays("x"), stream: true, stream_options: { include_usage: true } }),
    );
    expect(suppressed.chunks.some((c) => c.usage)).toBe(false);
    expect(suppressed.done).toBe(true);
  });

  it("streams tool calls as fragments keyed by index, id and name only in the first", async () => {
    fake.enqueue({
      toolCalls: [
        { name: "bash", arguments: { command: "echo hi there" }, id: "call_1" },
        { name: "read_file", arguments: '{"path":"a.txt"}' },
      ],
    });
    const { chunks } = await readSse(await post(fake, { ...userSays("x"), stream: true }));
    const fragments = chunks.flatMap((c) => c.choices[0]?.delta.tool_calls ?? []);
    const first = fragments.filter((f) => f.index === 0);
    expect(first[0]).toEqual({
      index: 0,
      id: "call_1",
      type: "function",
      function: { name: "bash", arguments: "" },
    });
    expect(first.length).toBeGreaterThan(2);
    for (const later of first.slice(1)) {
      expect(later.id).toBeUndefined();
      expect(later.function.name).toBeUndefined();
    }
    expect(first.map((f) => f.function.arguments).join("")).toBe('{"command":"echo hi there"}');
    const second = fragments.filter((f) => f.index === 1);
    expect(second[0]?.id).toMatch(/^call_fake_/);
    expect(second.map((f) => f.function.arguments).join("")).toBe('{"path":"a.txt"}');
    expect(chunks.at(-1)?.choices[0]?.finish_reason).toBe("tool_calls");
  });

  it("answers with an error status and an OpenAI-style error body", async () => {
    fake.enqueue({ status: 500, errorMessage: "boom" });
    const response = await post(fake, userSays("x"));
    expect(response.status).toBe(500);
    expect(await response.json()).toEqual({ error: { message: "boom", type: "server_error", code: null } });
  });

  it("uses the default handler when the queue is empty, the queue first", async () => {
    fake.setDefault((body) => ({ text: `model was ${body.model}` }));
    fake.enqueue({ text: "queued" });
    const first = (await (await post(fake, userSays("x"))).json()) as {
      choices: { message: { content: string } }[];
    };
    const second = (await (await post(fake, userSays("x"))).json()) as {
      choices: { message: { content: string } }[];
    };
    expect(first.choices[0]?.message.content).toBe("queued");
    expect(second.choices[0]?.message.content).toBe("model was m");
    expect(fake.requests.map((r) => r.n)).toEqual([1, 2]);
  });

  it("waitForRequest resolves on arrival; a hanging reply finishes on release()", async () => {
    fake.enqueue({ text: "late", hang: "before-headers" });
    const arrived = fake.waitForRequest(1);
    const response = post(fake, userSays("wait"));
    const request = await arrived;
    expect(request.body.messages[0]?.content).toBe("wait");
    fake.release();
    const body = (await (await response).json()) as { choices: { message: { content: string } }[] };
    expect(body.choices[0]?.message.content).toBe("late");
    expect(await request.closed).toBe("finished");
  });

  it("reports a client that went away from a hang after the first chunk", async () => {
    fake.enqueue({ text: "never finished", hang: "after-first-chunk" });
    const controller = new AbortController();
    const response = await post(fake, { ...userSays("x"), stream: true }, controller.signal);
    const reader = response.body!.getReader();
    const first = await reader.read();
    expect(new TextDecoder().decode(first.value)).toContain('"role":"assistant"');
    const aborted = new Promise((resolve) => fake.events.once("abort", resolve));
    controller.abort();
    await expect(reader.read()).rejects.toThrow();
    expect(await aborted).toBe(fake.requests[0]);
    await expect(fake.waitForAbort(1)).resolves.toBe(fake.requests[0]);
  });
});

describe("chunkDelayMs", () => {
  it("spaces the streamed chunks, and stops waiting when the client goes away", async () => {
    const fake = await startFakeOpenAI();
    try {
      fake.enqueue(
        { text: "abcd", chunks: 4, chunkDelayMs: 40 },
        { text: "abcd", chunks: 4, chunkDelayMs: 60_000 },
      );
      const started = Date.now();
      const { chunks, done } = await readSse(await post(fake, { ...userSays("x"), stream: true }));
      expect(done).toBe(true);
      expect(chunks.map((c) => c.choices[0]?.delta.content ?? "").join("")).toBe("abcd");
      // 6 chunks (role, 4 deltas, finish) with 5 pauses of 40 ms between them.
      expect(Date.now() - started).toBeGreaterThanOrEqual(5 * 40 - 5);

      const controller = new AbortController();
      const response = await post(fake, { ...userSays("x"), stream: true }, controller.signal);
      const reader = response.body!.getReader();
      await reader.read();
      controller.abort();
      await expect(fake.waitForAbort(2)).resolves.toBe(fake.requests[1]);
    } finally {
      await fake.close();
    }
  });
});

describe("markerReply", () => {
  const bash = [{ type: "function", function: { name: "bash" } }];
  const body = (messages: ChatRequestBody["messages"], tools = bash): ChatRequestBody => ({
    model: "m",
    messages,
    tools,
  });

  it("echoes every user message since the last final answer", () => {
    const reply = markerReply(
      body([
        { role: "system", content: "sys" },
        { role: "user", content: "old" },
        { role: "assistant", content: "echo: old" },
        { role: "user", content: "a" },
        { role: "user", content: [{ type: "text", text: "b" }] },
      ]),
    );
    expect(reply).toEqual({ text: "echo: a | b" });
  });

  it("asks for one bash call when offered, then answers after the tool result", () => {
    const ask = markerReply(body([{ role: "user", content: "run [[bash:echo hi]] please" }]));
    expect(ask.toolCalls).toEqual([{ name: "bash", arguments: { command: "echo hi" } }]);
    expect(ask.text).toBeUndefined();
    const after = markerReply(
      body([
        { role: "user", content: "run [[bash:echo hi]] please" },
        { role: "assistant", content: null, tool_calls: [{}] },
        { role: "tool", content: "hi", tool_call_id: "c1" },
      ]),
    );
    expect(after).toEqual({ text: "echo: run [[bash:echo hi]] please" });
    const unoffered = markerReply(body([{ role: "user", content: "[[bash:id]]" }], []));
    expect(unoffered).toEqual({ text: "echo: [[bash:id]]" });
  });

  it("streams slowly for [[slow:N]] and holds the answer for [[hang]]", () => {
    expect(markerReply(body([{ role: "user", content: "x [[slow:25]]" }]))).toMatchObject({
      chunkDelayMs: 25,
      chunks: 4,
    });
    expect(markerReply(body([{ role: "user", content: "x [[hang]]" }]))).toMatchObject({
      hang: "before-headers",
    });
  });
});

describe("splitInto", () => {
  it("splits into nearly equal parts and never loses text", () => {
    expect(splitInto("abcdefg", 3)).toEqual(["abc", "def", "g"]);
    expect(splitInto("ab", 5)).toEqual(["a", "b"]);
    expect(splitInto("", 3)).toEqual([""]);
  });
});

describe("reasoning and tails (issue 11)", () => {
  let fake: FakeOpenAI;
  beforeEach(async () => {
    fake = await startFakeOpenAI();
  });
  afterEach(async () => {
    await fake.close();
  });

  it("streams reasoning deltas before the text", async () => {
    fake.enqueue({ reasoning: "let me think", text: "ok", chunks: 1 });
    const { chunks } = await readSse(await post(fake, { ...userSays("x"), stream: true }));
    const deltas = chunks.map((c) => c.choices[0]?.delta as Record<string, unknown> | undefined);
    expect(deltas.map((d) => d?.reasoning_content ?? d?.content)).toEqual([
      "",
      "let me",
      " think",
      "ok",
      undefined,
    ]);
  });

  it.each([
    [
      "keepalive",
      (c: Chunk) => c.choices.length === 1 && Object.keys(c.choices[0]?.delta ?? {}).length === 0,
    ],
    [
      "reasoning",
      (c: Chunk) => (c.choices[0]?.delta as Record<string, unknown>)?.reasoning_content === "hmm ",
    ],
    ["usage", (c: Chunk) => c.choices.length === 0 && c.usage !== undefined],
  ] as const)("a %s tail repeats until release(), then the reply finishes", async (kind, isTail) => {
    fake.enqueue({ text: "done", chunks: 1, tail: { kind, everyMs: 5 } });
    const response = await post(fake, {
      ...userSays("x"),
      stream: true,
      stream_options: { include_usage: true },
    });
    const request = await fake.waitForRequest(1);
    const reader = response.body!.getReader();
    let seen = "";
    while ((seen.match(/\n\n/g) ?? []).length < 6)
      seen += new TextDecoder().decode((await reader.read()).value);
    fake.release();
    for (;;) {
      const part = await reader.read();
      if (part.done) break;
      seen += new TextDecoder().decode(part.value);
    }
    const chunks = seen
      .split("\n\n")
      .filter((e) => e.startsWith("data: {"))
      .map((e) => JSON.parse(e.slice(6)) as Chunk);
    expect(chunks.filter(isTail).length).toBeGreaterThanOrEqual(3);
    expect(chunks.some((c) => c.choices[0]?.finish_reason === "stop")).toBe(true);
    expect(seen.trimEnd().endsWith("data: [DONE]")).toBe(true);
    expect(await request.closed).toBe("finished");
  });
});
