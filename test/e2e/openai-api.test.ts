import { spawn } from "node:child_process";
import { readFile } from "node:fs/promises";
import { join } from "node:path";
import OpenAI, { AuthenticationError, NotFoundError } from "openai";
import { afterEach, describe, expect, it } from "vitest";
import { cleanupAll, E2eState, type GatewayProcess, type Json } from "./harness.js";

/**
 * The OpenAI-compatible API (docs/http-api.md, "OpenAI-compatible API") through the real gateway and the real
 * `openai` npm client: both APIs streamed and not, the model list, the token as the API key, the API off by
 * default, an idempotent retry answered once, a client that goes away mid-stream, and `curl`.
 */
describe("e2e: the OpenAI-compatible API", () => {
  afterEach(cleanupAll);

  const enabled = { config: { gateway: { openai: { enabled: true } } } };
  const usage = { prompt_tokens: 31, completion_tokens: 7, total_tokens: 38 };

  function clientOf(gateway: GatewayProcess, apiKey = gateway.token): OpenAI {
    return new OpenAI({ baseURL: `${gateway.url}/v1`, apiKey, maxRetries: 0, timeout: 20_000 });
  }

  /** The messages of `/api/history` of `session`: role and text. */
  async function history(
    gateway: GatewayProcess,
    session = "main",
  ): Promise<{ role: string; text: string }[]> {
    const answer = await gateway.call<{ messages: Json[] }>("GET", `/api/history?session=${session}`);
    expect(answer.status).toBe(200);
    return answer.body.messages.map((m) => ({ role: String(m.role), text: String(m.text) }));
  }

  /** The text of the last user message the fake model was sent in request `n` (1-based). */
  function lastUserText(state: E2eState, n: number): string {
    const messages = state.fake.requests[n - 1]?.body.messages ?? [];
    const users = messages.filter((m) => m.role === "user");
    return JSON.stringify(users.at(-1)?.content ?? null);
  }

  it("chat completions, not streamed: only the newest user message is the input, usage is the turn's", async () => {
    const state = await E2eState.create(enabled);
    const gateway = await state.startGateway();
    state.fake.enqueue({ text: "Hello from the agent.", usage });
    const completion = await clientOf(gateway).chat.completions.create({
      model: "clawdis",
      messages: [
        { role: "system", content: "a system prompt the gateway ignores" },
        { role: "user", content: "an older message the gateway ignores" },
        { role: "assistant", content: "an older answer" },
        { role: "user", content: [{ type: "text", text: "what is new?" }] },
      ],
    });
    expect(completion.object).toBe("chat.completion");
    expect(completion.model).toBe("clawdis");
    expect(completion.choices[0]?.message.content).toBe("Hello from the agent.");
    expect(completion.choices[0]?.finish_reason).toBe("stop");
    expect(completion.usage).toEqual(usage);
    const sent = JSON.stringify(state.fake.requests[0]?.body.messages);
    expect(lastUserText(state, 1)).toContain("what is new?");
    expect(sent).not.toContain("ignores");
    expect(await history(gateway)).toEqual([
      { role: "user", text: "what is new?" },
      { role: "assistant", text: "Hello from the agent." },
    ]);
  });

  it("chat completions, streamed: chunks, a finish, the usage chunk, [DONE]; clawdis:<key> picks the session", async () => {
    const state = await E2eState.create(enabled);
    const gateway = await state.startGateway();
    state.fake.enqueue({ text: "One, two, three.", chunks: 3, usage });
    const stream = await clientOf(gateway).chat.completions.create({
      model: "clawdis:notes",
      messages: [{ role: "user", content: "count" }],
      stream: true,
      stream_options: { include_usage: true },
    });
    const chunks: OpenAI.Chat.Completions.ChatCompletionChunk[] = [];
    for await (const chunk of stream) chunks.push(chunk);
    expect(new Set(chunks.map((c) => c.object))).toEqual(new Set(["chat.completion.chunk"]));
    expect(new Set(chunks.map((c) => c.id)).size).toBe(1);
    const text = chunks.map((c) => c.choices[0]?.delta.content ?? "").join("");
    expect(text).toBe("One, two, three.");
    // Streamed as the model wrote it: more than one piece of text.
    expect(chunks.filter((c) => (c.choices[0]?.delta.content ?? "") !== "").length).toBeGreaterThan(1);
    expect(chunks.at(-2)?.choices[0]?.finish_reason).toBe("stop");
    expect(chunks.at(-1)?.choices).toEqual([]);
    expect(chunks.at(-1)?.usage).toEqual(usage);
    expect(await history(gateway, "notes")).toEqual([
      { role: "user", text: "count" },
      { role: "assistant", text: "One, two, three." },
    ]);
    expect(await history(gateway, "main")).toEqual([]);
  });

  it("responses, not streamed and streamed (x-clawdis-session picks the session)", async () => {
    const state = await E2eState.create(enabled);
    const gateway = await state.startGateway();
    const client = clientOf(gateway);
    state.fake.enqueue({ text: "Plain answer.", usage });
    const response = await client.responses.create({
      model: "clawdis",
      instructions: "ignored",
      input: [
        { role: "user", content: "older" },
        { role: "user", content: [{ type: "input_text", text: "the newest" }] },
      ],
    });
    expect(response.object).toBe("response");
    expect(response.status).toBe("completed");
    expect(response.output_text).toBe("Plain answer.");
    expect(response.usage).toMatchObject({ input_tokens: 31, output_tokens: 7, total_tokens: 38 });
    expect(lastUserText(state, 1)).toContain("the newest");
    expect(JSON.stringify(state.fake.requests[0]?.body.messages)).not.toContain("older");

    state.fake.enqueue({ text: "Streamed answer, in parts.", chunks: 3, usage });
    const stream = await client.responses.create(
      { model: "clawdis", input: "stream it", stream: true },
      { headers: { "x-clawdis-session": "side" } },
    );
    const events: OpenAI.Responses.ResponseStreamEvent[] = [];
    for await (const event of stream) events.push(event);
    const types = events.map((e) => e.type).filter((t, i, all) => t !== all[i - 1]);
    expect(types).toEqual([
      "response.created",
      "response.in_progress",
      "response.output_item.added",
      "response.content_part.added",
      "response.output_text.delta",
      "response.output_text.done",
      "response.content_part.done",
      "response.output_item.done",
      "response.completed",
    ]);
    expect(events.map((e) => e.sequence_number)).toEqual(events.map((_, i) => i));
    const deltas = events.flatMap((e) => (e.type === "response.output_text.delta" ? [e.delta] : []));
    expect(deltas.length).toBeGreaterThan(1);
    expect(deltas.join("")).toBe("Streamed answer, in parts.");
    const completed = events.at(-1);
    if (completed?.type !== "response.completed")
      throw new Error("the stream did not end with response.completed");
    expect(completed.response.usage?.output_tokens).toBe(7);
    expect(completed.response.output[0]).toMatchObject({
      type: "message",
      content: [{ type: "output_text", text: "Streamed answer, in parts." }],
    });
    expect(await history(gateway, "side")).toEqual([
      { role: "user", text: "stream it" },
      { role: "assistant", text: "Streamed answer, in parts." },
    ]);
  });

  it("models.list; a wrong key is AuthenticationError; an unknown model is NotFoundError", async () => {
    const state = await E2eState.create(enabled);
    const gateway = await state.startGateway();
    state.fake.enqueue({ text: "ok" });
    await clientOf(gateway).chat.completions.create({
      model: "clawdis:notes",
      messages: [{ role: "user", content: "hi" }],
    });
    const models = [];
    for await (const model of clientOf(gateway).models.list()) models.push(model.id);
    expect(models).toEqual(["clawdis", "clawdis:notes"]);

    const wrong = await clientOf(gateway, "not-the-token")
      .chat.completions.create({ model: "clawdis", messages: [{ role: "user", content: "hi" }] })
      .catch((error: unknown) => error);
    expect(wrong).toBeInstanceOf(AuthenticationError);
    expect((wrong as AuthenticationError).code).toBe("invalid_api_key");
    const unknown = await clientOf(gateway)
      .chat.completions.create({ model: "gpt-4o", messages: [{ role: "user", content: "hi" }] })
      .catch((error: unknown) => error);
    expect(unknown).toBeInstanceOf(NotFoundError);
    expect((unknown as NotFoundError).param).toBe("model");
    const noUser = await gateway.call("POST", "/v1/chat/completions", {
      model: "clawdis",
      messages: [{ role: "system", content: "only this" }],
    });
    expect(noUser).toEqual({
      status: 400,
      body: {
        error: {
          message: "messages holds no user message",
          type: "invalid_request_error",
          param: "messages",
          code: null,
        },
      },
    });
    // Only the one turn reached the model.
    expect(state.fake.requests.length).toBe(1);
  });

  it("no model configured: 503 no_model, saying how to set one", async () => {
    const state = await E2eState.create({
      config: { gateway: { openai: { enabled: true } }, inbound: { reply: { agent: { model: undefined } } } },
    });
    // Two models at the endpoint: the gateway cannot pick one by itself.
    state.fake.models = ["one", "two"];
    const gateway = await state.startGateway();
    const answer = await gateway.call("POST", "/v1/chat/completions", {
      model: "clawdis",
      messages: [{ role: "user", content: "anyone there?" }],
    });
    expect(answer.status).toBe(503);
    expect(answer.body).toMatchObject({
      error: { type: "service_unavailable", code: "no_model", param: null },
    });
    expect(JSON.stringify(answer.body)).toContain("inbound.reply.agent.model");
    expect(state.fake.requests.length).toBe(0);
  });

  it("off by default: 404 in OpenAI's shape (NotFoundError)", async () => {
    const state = await E2eState.create();
    const gateway = await state.startGateway();
    const error = await clientOf(gateway)
      .chat.completions.create({ model: "clawdis", messages: [{ role: "user", content: "hi" }] })
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(NotFoundError);
    expect((error as NotFoundError).message).toContain("gateway.openai.enabled");
    expect(state.fake.requests.length).toBe(0);
  });

  it("a retry with the same Idempotency-Key, sent while the first runs, gets the same reply; the model is asked once", async () => {
    const state = await E2eState.create(enabled);
    const gateway = await state.startGateway();
    state.fake.enqueue({ text: "Only once.", hang: "before-headers", usage });
    const client = clientOf(gateway);
    const ask = () =>
      client.chat.completions.create(
        { model: "clawdis", messages: [{ role: "user", content: "do it once" }] },
        { headers: { "Idempotency-Key": "retry-me-1" } },
      );
    const first = ask();
    await state.fake.waitForRequest(1);
    const second = ask();
    // Its headers come once the retry is taken: the first attempt is still waiting for the model.
    const streamed = await client.chat.completions.create(
      { model: "clawdis", messages: [{ role: "user", content: "do it once" }], stream: true },
      { headers: { "Idempotency-Key": "retry-me-1" } },
    );
    expect(state.fake.requests.length).toBe(1);
    state.fake.release();
    const [a, b] = await Promise.all([first, second]);
    expect(b).toEqual(a);
    expect(a.choices[0]?.message.content).toBe("Only once.");
    let text = "";
    for await (const chunk of streamed) text += chunk.choices[0]?.delta.content ?? "";
    expect(text).toBe("Only once.");
    // A retry after the turn ended answers from it too.
    expect(await ask()).toEqual(a);
    expect(state.fake.requests.length).toBe(1);
    expect(await history(gateway)).toEqual([
      { role: "user", text: "do it once" },
      { role: "assistant", text: "Only once." },
    ]);
  });

  it("a retry after the gateway restarted is answered from the transcript; the model is still asked once", async () => {
    const state = await E2eState.create(enabled);
    const first = await state.startGateway();
    state.fake.enqueue({ text: "Answered before the restart.", usage });
    const ask = (gateway: GatewayProcess) =>
      clientOf(gateway).chat.completions.create(
        { model: "clawdis", messages: [{ role: "user", content: "once, across restarts" }] },
        { headers: { "Idempotency-Key": "across-restarts" } },
      );
    const before = await ask(first);
    expect((await first.stop()).code).toBe(0);
    const second = await state.startGateway();
    // Asked of another session, the key finds no message there: it does not run, it is 409.
    const unknown = await second.call(
      "POST",
      "/v1/chat/completions",
      { model: "clawdis:elsewhere", messages: [{ role: "user", content: "once, across restarts" }] },
      { "idempotency-key": "across-restarts" },
    );
    expect(unknown.status).toBe(409);
    expect(unknown.body).toMatchObject({
      error: { code: "idempotency_key_reused", param: "Idempotency-Key" },
    });
    const after = await ask(second);
    expect(after.id).toBe(before.id);
    expect(after.choices).toEqual(before.choices);
    expect(after.usage).toEqual(usage);
    expect(state.fake.requests.length).toBe(1);
  });

  it("a client that goes away mid-stream stops nothing: the whole reply lands in the transcript", async () => {
    const state = await E2eState.create(enabled);
    const gateway = await state.startGateway();
    const events = await gateway.events("main");
    try {
      state.fake.enqueue({ text: "First half. Second half.", chunks: 2, hang: "after-first-output" });
      const controller = new AbortController();
      const stream = await clientOf(gateway).chat.completions.create(
        { model: "clawdis", messages: [{ role: "user", content: "talk, then I leave" }], stream: true },
        { signal: controller.signal },
      );
      let seen = "";
      const reading = (async () => {
        for await (const chunk of stream) {
          seen += chunk.choices[0]?.delta.content ?? "";
          if (seen.length > 0) controller.abort();
        }
      })();
      // The abort ends the loop (the SDK throws an abort error); only a missing first piece is a failure here.
      let timer: NodeJS.Timeout | undefined;
      const deadline = new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new Error("no piece of the streamed reply within 15 s")), 15_000);
      });
      try {
        await Promise.race([reading.catch(() => {}), deadline]);
      } finally {
        clearTimeout(timer);
      }
      // Left after the first piece of the reply, before the rest was written.
      expect(seen.length).toBeGreaterThan(0);
      expect("First half. Second half.".startsWith(seen) && seen !== "First half. Second half.").toBe(true);
      // Answered after the abort was sent: the gateway has read the client's close by then (in practice), and the
      // model's answer is still being waited for.
      expect((await gateway.call("GET", "/api/status")).status).toBe(200);
      state.fake.release();
      expect(await state.fake.requests[0]?.closed).toBe("finished");
      await events.waitFor(
        (e) => e.type === "message" && e.data.role === "assistant",
        "the assistant's reply",
      );
    } finally {
      events.close();
    }
    expect(await history(gateway)).toEqual([
      { role: "user", text: "talk, then I leave" },
      { role: "assistant", text: "First half. Second half." },
    ]);
  });

  it("tools: none by default; gateway.openai.tools grants them, and the API is switched on and off live", async () => {
    const state = await E2eState.create();
    const gateway = await state.startGateway();
    const client = clientOf(gateway);
    const offered = (n: number): string[] =>
      (state.fake.requests[n - 1]?.body.tools ?? []).map((t) => t.function.name).sort();
    const ask = () =>
      client.chat.completions.create({ model: "clawdis", messages: [{ role: "user", content: "go" }] });

    let from = gateway.stderr.length;
    await state.writeConfig(state.configFor(enabled));
    await gateway.stderr.waitFor("config change: applied live: gateway.openai.enabled", { from });
    state.fake.enqueue({ text: "no tools here" });
    expect((await ask()).choices[0]?.message.content).toBe("no tools here");
    expect(offered(1)).toEqual([]);

    from = gateway.stderr.length;
    await state.writeConfig(
      state.configFor({ config: { gateway: { openai: { enabled: true, tools: ["read_file", "bash"] } } } }),
    );
    await gateway.stderr.waitFor("config change: applied live: gateway.openai.tools", { from });
    state.fake.enqueue({ text: "with tools" });
    await ask();
    expect(offered(2)).toEqual(["bash", "read_file"]);

    from = gateway.stderr.length;
    await state.writeConfig(state.configFor());
    await gateway.stderr.waitFor("config change: applied live: gateway.openai", { from });
    expect(await ask().catch((e: unknown) => e)).toBeInstanceOf(NotFoundError);
    expect(state.fake.requests.length).toBe(2);
  });

  it("an image as a data: URL reaches the session's inbox as a file, and the model is told where", async () => {
    const state = await E2eState.create(enabled);
    const gateway = await state.startGateway();
    const bytes = Buffer.from("\x89PNG\r\n\x1a\nnot really a picture", "latin1");
    state.fake.enqueue({ text: "Nice picture." });
    const completion = await clientOf(gateway).chat.completions.create({
      model: "clawdis",
      messages: [
        {
          role: "user",
          content: [
            { type: "text", text: "look at this" },
            { type: "image_url", image_url: { url: `data:image/png;base64,${bytes.toString("base64")}` } },
          ],
        },
      ],
    });
    expect(completion.choices[0]?.message.content).toBe("Nice picture.");
    const told = lastUserText(state, 1);
    expect(told).toContain("look at this");
    const saved = /saved at (inbox\/[^;\]"\\]+\.png)/.exec(told);
    if (!saved) throw new Error(`the model was not told where the image is: ${told}`);
    expect(await readFile(join(state.dir, "workspace", saved[1] as string))).toEqual(bytes);
  });

  it("curl: a chat completion, not streamed", async () => {
    const state = await E2eState.create(enabled);
    const gateway = await state.startGateway();
    state.fake.enqueue({ text: "Hi, curl.", usage });
    const body = JSON.stringify({ model: "clawdis", messages: [{ role: "user", content: "from curl" }] });
    const curl = spawn("curl", [
      "-sS",
      "--max-time",
      "20",
      "-H",
      `Authorization: Bearer ${gateway.token}`,
      "-H",
      "Content-Type: application/json",
      "-d",
      body,
      `${gateway.url}/v1/chat/completions`,
    ]);
    let out = "";
    let err = "";
    curl.stdout.on("data", (d: Buffer) => {
      out += d.toString();
    });
    curl.stderr.on("data", (d: Buffer) => {
      err += d.toString();
    });
    const code = await new Promise<number | null>((resolve) => curl.on("close", resolve));
    expect(code, err).toBe(0);
    const answer = JSON.parse(out) as { choices: { message: { content: string } }[]; usage: Json };
    expect(answer.choices[0]?.message.content).toBe("Hi, curl.");
    expect(answer.usage).toEqual(usage);
  });
});
